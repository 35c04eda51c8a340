// A connection's way out (RFC 9113 §6.9): frames batched into one socket write per turn, queued DATA sent as the peer's windows allow, and backpressure both ways.
import { CodecError } from "./codec-error.js";
import { DEFAULT_WINDOW } from "./frame-types.js";
import { FrameWriter } from "./frame-writer.js";
import { NO_QUEUE, type H2Stream } from "./h2-stream.js";
import { HpackEncoder } from "./hpack-encoder.js";
import { keepSmallTail } from "./queued-pieces.js";

/** The socket as the connection uses it (a `net.Socket`, or a test's stand-in). */
export interface H2Transport {
  /** Once `writableLength` is 0 again, the chunk's memory is the connection's to write over. */
  write(chunk: Buffer): boolean;
  cork(): void;
  uncork(): void;
  /** Octets written and not yet taken by the kernel. */
  readonly writableLength: number;
  pause(): unknown;
  resume(): unknown;
  end(): unknown;
  destroy(): unknown;
}

/** What the output tells its connection about a stream. */
export interface OutputEvents {
  /** Our END_STREAM went out on the stream: the last of its queue, or its trailers. */
  endedLocally(stream: H2Stream): void;
  /** The stream's queued output has gone, and its user asked to hear of it. */
  writable(stream: H2Stream): void;
}

/**
 * SETTINGS and PING ACKs and RST_STREAMs answering the peer, written and not yet taken by the
 * kernel (or made in one read): past nghttp2's 1,000, the peer floods us (ENHANCE_YOUR_CALM).
 */
const MAX_QUEUED_ANSWERS = 1000;
/** Past this much unwritten output, reading stops (a peer that does not read cannot make us buffer more) and new DATA waits. */
const HIGH_WATER = 256 * 1024;
const EMPTY = Buffer.alloc(0);

/** One per connection: every frame goes through `writer` (HEADERS with `encoder`), and out in one write per turn. */
export class ConnectionOutput {
  readonly writer = new FrameWriter();
  readonly encoder = new HpackEncoder();
  /** What the connection may still send, across its streams (the peer's connection window). */
  sendWindow = DEFAULT_WINDOW;
  /** A socket read is being handled: what it makes us send goes out in one write after it, not per frame. */
  receiving = false;
  readonly #transport: H2Transport;
  readonly #events: OutputEvents;
  /** Streams with output waiting for window, in the order they began waiting. */
  readonly #blocked = new Set<H2Stream>();
  #flushScheduled = false;
  #readingPaused = false;
  #queuedAnswers = 0;

  constructor(transport: H2Transport, events: OutputEvents) {
    this.#transport = transport;
    this.#events = events;
  }

  /**
   * Body octets (and the end with `endStream`) for a stream we may still send on. What the
   * windows do not allow waits on the stream; false means it waits: stop reading the source until
   * `writable`.
   */
  data(stream: H2Stream, data: Buffer, endStream: boolean): boolean {
    if (data.length > 0) {
      if (stream.queue === NO_QUEUE) stream.queue = [data];
      else stream.queue.push(data);
    }
    stream.queuedEnd = endStream;
    this.#sendQueued(stream);
    this.scheduleFlush();
    if (stream.queue.length === 0) return true;
    // Waiting: a small piece is copied out of the socket read it came in (memory follows octets, never pieces).
    if (data.length > 0 && stream.queue.at(-1) === data) keepSmallTail(stream.queue);
    stream.wantsWritable = true;
    return false;
  }

  /** Trailers, ending the stream once its queued data has gone. */
  trailers(stream: H2Stream, fields: readonly string[]): void {
    stream.queuedTrailers = fields;
    this.#sendQueued(stream);
    this.scheduleFlush();
  }

  /** The peer's window for `stream` grew: what waits on it may go. */
  streamWindowGrew(stream: H2Stream): void {
    if (stream.queue.length > 0 || stream.queuedEnd || stream.queuedTrailers !== undefined) this.#sendQueued(stream);
  }

  /** The connection's window grew, or the socket took our output: the waiting streams send, first come first. */
  sendBlocked(): void {
    for (const stream of [...this.#blocked]) {
      if (this.sendWindow <= 0) return;
      this.#sendQueued(stream);
    }
  }

  /** The stream left the connection: nothing of it waits any more. */
  forget(stream: H2Stream): void {
    this.#blocked.delete(stream);
  }

  /** One more answer the peer made us queue; the count starts again whenever the socket has taken everything. */
  answered(): void {
    if (++this.#queuedAnswers > MAX_QUEUED_ANSWERS) throw new CodecError("ENHANCE_YOUR_CALM", "too many SETTINGS, PING or RST_STREAM answers queued");
  }

  /** The socket drained: reading goes on, and streams waiting for it send. */
  drained(): void {
    this.#queuedAnswers = 0;
    if (this.#readingPaused && this.#transport.writableLength < HIGH_WATER) {
      this.#readingPaused = false;
      this.#transport.resume();
    }
    this.sendBlocked();
    this.flush();
  }

  /** A flush at the end of this turn (one after the read under way, if there is one). */
  scheduleFlush(): void {
    if (this.#flushScheduled || this.receiving) return;
    this.#flushScheduled = true;
    queueMicrotask(() => this.flush());
  }

  /** Writes this turn's frames in one go; past the high-water mark, reading stops until the socket drains. */
  flush(): void {
    this.#flushScheduled = false;
    const pieces = this.writer.flush();
    const transport = this.#transport;
    if (pieces.length === 1) transport.write(pieces[0] as Buffer);
    else if (pieces.length > 1) {
      transport.cork();
      for (const piece of pieces) transport.write(piece);
      transport.uncork();
    }
    if (transport.writableLength === 0) {
      // The kernel has every octet written: no view of the output buffer is held any more.
      this.#queuedAnswers = 0;
      this.writer.reuseOutput();
      return;
    }
    if (!this.#readingPaused && transport.writableLength >= HIGH_WATER) {
      this.#readingPaused = true;
      transport.pause();
    }
  }

  /** Sends what the windows allow of a stream's queue; the end or trailers once the queue is empty. */
  #sendQueued(stream: H2Stream): void {
    const queue = stream.queue;
    while (queue.length > 0) {
      const allowed = Math.min(stream.sendWindow, this.sendWindow);
      if (allowed <= 0 || this.#transport.writableLength + this.writer.pendingLength >= HIGH_WATER) {
        this.#blocked.add(stream);
        return;
      }
      const head = queue[0] as Buffer;
      const piece = head.length <= allowed ? head : head.subarray(0, allowed);
      if (piece === head) queue.shift();
      else queue[0] = head.subarray(allowed);
      stream.sendWindow -= piece.length;
      this.sendWindow -= piece.length;
      const ends = queue.length === 0 && stream.queuedEnd && stream.queuedTrailers === undefined;
      this.writer.data(stream.id, piece, ends);
      if (ends) {
        stream.queue = NO_QUEUE;
        stream.queuedEnd = false;
        this.#events.endedLocally(stream);
        return this.#wake(stream);
      }
    }
    stream.queue = NO_QUEUE;
    this.#blocked.delete(stream);
    if (stream.queuedTrailers !== undefined) {
      const trailers = stream.queuedTrailers;
      stream.queuedTrailers = undefined;
      this.writer.headers(stream.id, trailers, true, this.encoder);
      this.#events.endedLocally(stream);
    } else if (stream.queuedEnd) {
      stream.queuedEnd = false;
      this.writer.data(stream.id, EMPTY, true);
      this.#events.endedLocally(stream);
    }
    this.#wake(stream);
  }

  #wake(stream: H2Stream): void {
    if (!stream.wantsWritable) return;
    stream.wantsWritable = false;
    this.#events.writable(stream);
  }
}
