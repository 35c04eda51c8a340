// The access log's chunks written from the event loop to a non-blocking pipe descriptor of the process's own: one write(2) per chunk, queued only while the pipe is full, the queue bounded.
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
 */
export class PipeSink implements AccessSink {
  readonly #socket: Socket;
  readonly #maxQueuedBytes: number;
  readonly #dropped: DroppedLines;
  /** Chunks waiting for the one in flight; [#queueStart, length) are still to write. */
  #queue: Buffer[] = [];
  #queueStart = 0;
  /** Bytes of the queue and the chunk in flight. */
  #queuedBytes = 0;
  #inFlight: Buffer | undefined;
  #broken = false;
  #ending = false;
  #ended: Promise<void> | undefined;
  /** Set by end(): told of each chunk written, and when the last one is. */
  #onProgress: (() => void) | undefined;
  #onIdle: (() => void) | undefined;

  /** `fd` is a pipe opened for writing, non-blocking, that the sink now owns (it closes it). */
  constructor(fd: number, { maxQueuedBytes = MAX_QUEUED_BYTES, onDropped }: AccessSinkOptions = {}) {
    this.#socket = new Socket({ fd, readable: false, writable: true });
    // Nothing is read from it; an idle descriptor must not keep the process alive (writes in flight still do).
    this.#socket.unref();
    this.#socket.on("error", () => this.#break());
    this.#maxQueuedBytes = maxQueuedBytes;
    this.#dropped = new DroppedLines(onDropped);
  }

  write(chunk: Buffer): boolean {
    // One chunk is always taken when nothing waits, however long: a line longer than the bound still gets out.
    if (this.#ending || this.#broken || (this.#queuedBytes > 0 && this.#queuedBytes + chunk.length > this.#maxQueuedBytes)) {
      this.#dropped.add(chunk);
      return false;
    }
    this.#queuedBytes += chunk.length;
    if (this.#inFlight === undefined) this.#send(chunk);
    else this.#queue.push(chunk);
    return true;
  }

  #send(chunk: Buffer): void {
    this.#inFlight = chunk;
    this.#socket.write(chunk, this.#afterWrite);
  }

  readonly #afterWrite = (error?: Error | null): void => {
    // A failed write also emits 'error' (#break), which drops the rest.
    if (error || this.#inFlight === undefined) return;
    this.#queuedBytes -= this.#inFlight.length;
    this.#inFlight = undefined;
    this.#onProgress?.();
    if (this.#queueStart < this.#queue.length) {
      const next = this.#queue[this.#queueStart]!;
      this.#queueStart++;
      if (this.#queueStart === this.#queue.length) {
        this.#queue = [];
        this.#queueStart = 0;
      }
      this.#send(next);
      return;
    }
    this.#dropped.caughtUp();
    this.#onIdle?.();
  };

  #break(): void {
    if (this.#broken) return;
    this.#broken = true;
    for (let index = this.#queueStart; index < this.#queue.length; index++) this.#dropped.add(this.#queue[index]!);
    if (this.#inFlight) this.#dropped.add(this.#inFlight);
    this.#queue = [];
    this.#queueStart = 0;
    this.#queuedBytes = 0;
    this.#inFlight = undefined;
    this.#socket.destroy();
    this.#onIdle?.();
  }

  end(timeoutMs: number): Promise<void> {
    return (this.#ended ??= new Promise<void>((resolve) => {
      this.#ending = true;
      const finish = () => {
        clearTimeout(timer);
        this.#onProgress = this.#onIdle = undefined;
        this.#socket.destroy();
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
