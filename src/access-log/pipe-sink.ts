// Every line the process logs, written from the event loop to a non-blocking pipe descriptor of its own (or handed to a ChunkWriter): one write per chunk, queued only while the last is not done, lifecycle lines ahead of access lines, each queue bounded.
import { Socket } from "node:net";
import { DroppedLines, MAX_QUEUED_BYTES, type AccessSink, type AccessSinkOptions } from "./access-sink.js";

/**
 * Why not sonic-boom here: each of its writes is a trip through libuv's thread pool (a worker
 * woken, its write(2), the completion back on the loop). On a non-blocking pipe the loop can
 * just write: libuv's stream tries the write(2) at once (uv_try_write) and only when the pipe is
 * full does it wait for it to be writable, while the loop goes on. Measured per line in one
 * process, 5-20 lines a turn: 0.12-0.13 µs for this, 0.44-0.65 µs for sonic-boom
 * (bench/access-sink-micro.ts; bench/README.md, "Access log").
 *
 * Each chunk is a write(2) of its own, handed on only when the one before has gone: Writable
 * would hand a backlog to writev(2), and a writev of more than PIPE_BUF bytes may be cut anywhere
 * by a pipe with less room than that, leaving half a line for another writer (the lifecycle
 * lines, an app sharing stdout) to follow. Chunks of whole lines of at most PIPE_BUF bytes are
 * written whole or not at all. A completion that came at once is called back from
 * process.nextTick, so a batch of chunks still goes out before the loop moves on.
 *
 * When the pipe stays full, at most `maxQueuedBytes` wait; later chunks are dropped and counted,
 * and the count is reported once everything queued has been written (see access-sink.ts). If
 * the pipe breaks (EPIPE: nobody will ever read it) everything is dropped from then on.
 *
 * The process's own lines (lifecycle, warnings: src/logger.ts) come through {@link writeUrgent}:
 * written at once when the pipe has room, so each is out before what it announces (the app in
 * the entrypoint form shares the pipe); otherwise queued ahead of every access chunk, within a
 * bound of their own. Never a write(2) that waits: a reader that stopped (or an app that floods
 * the pipe) cannot stop the event loop, so /health, signals and the drain go on.
 *
 * The same queues serve a descriptor that cannot be made non-blocking (the entrypoint form's
 * stdout socket: src/access-log/shared-descriptor-writer.ts), given as a {@link ChunkWriter}.
 */
export class PipeSink implements AccessSink {
  readonly #writer: ChunkWriter;
  /** Lifecycle lines, written before any access chunk that waits. */
  readonly #urgent: ChunkQueue;
  readonly #access: ChunkQueue;
  #inFlight: Buffer | undefined;
  /** Which queue the chunk in flight came from, so its bytes leave that queue's count once written. */
  #inFlightQueue: ChunkQueue | undefined;
  #broken = false;
  #ending = false;
  #ended: Promise<void> | undefined;
  /** Set by end(): told of each chunk written, and when the last one is. */
  #onProgress: (() => void) | undefined;
  #onIdle: (() => void) | undefined;
  /** Lifecycle chunks taken, and written: {@link lifecycleWritten} waits for the second to reach the first. */
  #urgentTaken = 0;
  #urgentWritten = 0;
  #writtenWaiters: Array<{ readonly upTo: number; readonly resolve: () => void }> = [];

  /** `target`: a pipe opened for writing, non-blocking, that the sink now owns (it closes it), or a writer of another kind. */
  constructor(target: number | ChunkWriter, { maxQueuedBytes = MAX_QUEUED_BYTES, onDropped, maxUrgentBytes = MAX_URGENT_BYTES, onUrgentDropped }: PipeSinkOptions = {}) {
    this.#writer = typeof target === "number" ? socketWriter(target, () => this.#break()) : target;
    this.#access = new ChunkQueue(maxQueuedBytes, new DroppedLines(onDropped));
    this.#urgent = new ChunkQueue(maxUrgentBytes, new DroppedLines(onUrgentDropped));
  }

  /** An access chunk: written when the pipe and the lifecycle lines before it allow. */
  write(chunk: Buffer): boolean {
    return this.#enqueue(this.#access, chunk);
  }

  /** A lifecycle line (or a few): written now if nothing waits, else ahead of every access chunk. */
  writeUrgent(chunk: Buffer): boolean {
    return this.#enqueue(this.#urgent, chunk);
  }

  #enqueue(queue: ChunkQueue, chunk: Buffer): boolean {
    if (this.#ending || this.#broken || !queue.fits(chunk)) {
      queue.dropped.add(chunk);
      return false;
    }
    if (queue === this.#urgent) this.#urgentTaken++;
    if (this.#inFlight === undefined) {
      queue.bytes += chunk.length;
      this.#send(queue, chunk);
    } else {
      queue.push(chunk);
    }
    return true;
  }

  #send(queue: ChunkQueue, chunk: Buffer): void {
    this.#inFlight = chunk;
    this.#inFlightQueue = queue;
    this.#writer.write(chunk, this.#afterWrite);
  }

  readonly #afterWrite = (error?: Error | null): void => {
    if (error) return this.#break();
    if (this.#inFlight === undefined) return;
    this.#inFlightQueue!.bytes -= this.#inFlight.length;
    if (this.#inFlightQueue === this.#urgent) this.#tellWritten(++this.#urgentWritten);
    this.#inFlight = this.#inFlightQueue = undefined;
    this.#onProgress?.();
    const queue = this.#urgent.waiting ? this.#urgent : this.#access.waiting ? this.#access : undefined;
    if (queue !== undefined) {
      this.#send(queue, queue.shift());
      return;
    }
    // Lifecycle drops first: their report is itself an urgent line.
    this.#urgent.dropped.caughtUp();
    this.#access.dropped.caughtUp();
    if (this.#inFlight === undefined) this.#onIdle?.();
  };

  #break(): void {
    if (this.#broken) return;
    this.#broken = true;
    if (this.#inFlight) this.#inFlightQueue!.dropped.add(this.#inFlight);
    this.#inFlight = this.#inFlightQueue = undefined;
    this.#urgent.dropAll();
    this.#access.dropAll();
    this.#writer.close();
    this.#tellWritten(Infinity);
    this.#onIdle?.();
  }

  /**
   * Resolves once every lifecycle line taken so far is written (or dropped: the sink broke or
   * ended), or after `timeoutMs` whatever stdout does: a wait before what the lines announce.
   */
  lifecycleWritten(timeoutMs: number): Promise<void> {
    if (this.#urgentWritten >= this.#urgentTaken || this.#broken || this.#ending) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#writtenWaiters = this.#writtenWaiters.filter((waiter) => waiter !== entry);
        resolve();
      }, timeoutMs);
      const entry = { upTo: this.#urgentTaken, resolve: () => (clearTimeout(timer), resolve()) };
      this.#writtenWaiters.push(entry);
    });
  }

  #tellWritten(written: number): void {
    if (this.#writtenWaiters.length === 0) return;
    const done = this.#writtenWaiters.filter((waiter) => waiter.upTo <= written);
    this.#writtenWaiters = this.#writtenWaiters.filter((waiter) => waiter.upTo > written);
    for (const waiter of done) waiter.resolve();
  }

  end(timeoutMs: number): Promise<void> {
    return (this.#ended ??= new Promise<void>((resolve) => {
      this.#ending = true;
      const finish = () => {
        clearTimeout(timer);
        this.#onProgress = this.#onIdle = undefined;
        this.#writer.close();
        this.#tellWritten(Infinity);
        resolve();
      };
      // A reader that still takes chunks is waited for; only `timeoutMs` without one written gives up.
      const timer = setTimeout(finish, timeoutMs);
      if (this.#inFlight === undefined) return finish();
      this.#onProgress = () => timer.refresh();
      this.#onIdle = finish;
    }));
  }
}

/** Where a {@link PipeSink}'s chunks go, one at a time: `done` once the whole chunk is written (or with the error that ends the writer). */
export interface ChunkWriter {
  write(chunk: Buffer, done: (error?: Error | null) => void): void;
  /** Nothing more is written; a write already in the kernel is left to finish or not. */
  close(): void;
}

/** A non-blocking pipe (or a socket of our own) written from the loop through libuv's stream; `onError` is told when it breaks. */
function socketWriter(fd: number, onError: () => void): ChunkWriter {
  const socket = new Socket({ fd, readable: false, writable: true });
  // Nothing is read from it; an idle descriptor must not keep the process alive (writes in flight still do).
  socket.unref();
  socket.on("error", onError);
  return { write: (chunk, done) => void socket.write(chunk, done), close: () => socket.destroy() };
}

/** The bound on lifecycle lines waiting for stdout: a few hundred lines, far more than a stop or an outage logs. */
export const MAX_URGENT_BYTES = 256 * 1024;

/** The access sink's options, and the lifecycle lane's own bound and report. */
export interface PipeSinkOptions extends AccessSinkOptions {
  readonly maxUrgentBytes?: number;
  readonly onUrgentDropped?: (lines: number) => void;
}

/** Chunks waiting for the pipe, in order, with their bytes (the chunk in flight included) held under a bound. */
class ChunkQueue {
  readonly #max: number;
  readonly dropped: DroppedLines;
  #chunks: Buffer[] = [];
  #start = 0;
  /** Bytes queued, and of the chunk in flight when it came from here. */
  bytes = 0;

  constructor(max: number, dropped: DroppedLines) {
    this.#max = max;
    this.dropped = dropped;
  }

  /** One chunk is always taken when nothing waits, however long: a line longer than the bound still gets out. */
  fits(chunk: Buffer): boolean {
    return this.bytes === 0 || this.bytes + chunk.length <= this.#max;
  }

  get waiting(): boolean {
    return this.#start < this.#chunks.length;
  }

  push(chunk: Buffer): void {
    this.bytes += chunk.length;
    this.#chunks.push(chunk);
  }

  shift(): Buffer {
    const next = this.#chunks[this.#start]!;
    this.#start++;
    if (this.#start === this.#chunks.length) {
      this.#chunks = [];
      this.#start = 0;
    }
    return next;
  }

  dropAll(): void {
    for (let index = this.#start; index < this.#chunks.length; index++) this.dropped.add(this.#chunks[index]!);
    this.#chunks = [];
    this.#start = 0;
    this.bytes = 0;
  }
}
