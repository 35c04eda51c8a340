// Gathers access lines and hands them to the asynchronous destination in whole-line chunks of at most PIPE_BUF bytes: at the end of the turn when idle, at most once per interval under load.
import { NO_ROOM } from "./json-bytes.js";

/** What the chunks go to: stdout's access sink (src/access-log/stdout-sink.ts), or any stream with write(). */
export interface LineSink {
  write(chunk: Buffer): unknown;
}

/** Writes a line of its own kind (an access line) straight into the batch's buffer, as UTF-8. */
export interface LineEncoder<T> {
  /** Writes `value`'s line (newline included) into `buffer` at `offset`; returns where it ends, or NO_ROOM (json-bytes.ts) when it does not fit before `limit`. */
  encode(value: T, buffer: Buffer, offset: number, limit: number): number;
  /** At least the bytes its line can need: the size of a buffer of its own when it is longer than a chunk. */
  maxBytes(value: T): number;
}

/** A line as text, measured only when it might not fit. */
const TEXT_LINE: LineEncoder<string> = {
  encode(line, buffer, offset, limit) {
    // UTF-8 takes at most 3 bytes per UTF-16 unit: with that much room, no need to measure.
    if (line.length * 3 > limit - offset && Buffer.byteLength(line) > limit - offset) return NO_ROOM;
    return offset + buffer.write(line, offset);
  },
  maxBytes: (line) => Buffer.byteLength(line),
};

/** Chunks are cut from buffers of this size, so that a new one is allocated every few chunks, not for each. */
const SLAB_BYTES = 64 * 1024;

/** How often, at most, a batch that did not fill a chunk is handed on while lines keep coming. */
export const LINE_BATCH_INTERVAL_MS = 25;

/**
 * Why: every write is a system call, and through sonic-boom a trip through the thread pool
 * (submit, a worker's write(2), its completion back on the loop) that starts the next as soon
 * as one completes; under load that was one write per line or two, and the trips cost more than
 * the lines (bench/README.md, "Access log"). So the first line after a quiet spell goes out at
 * the end of its turn (setImmediate, after the reads that finished its request), and while lines
 * keep coming they go at most every `intervalMs`, as many 4 KiB chunks as have gathered. A line
 * is never held longer than that, and end() (src/logger.ts) flushes the rest before exit.
 * Chunks stay whole lines of at most `maxChunkBytes` (PIPE_BUF), so each write(2) is atomic on a
 * pipe; both sinks keep such chunks apart when they queue them. A longer line is a chunk alone.
 */
export class LineBatch {
  readonly #sink: LineSink;
  readonly #maxChunkBytes: number;
  readonly #intervalMs: number;
  readonly #now: () => number;
  /** Lines are encoded into this once, as they come; [#start, #used) is the chunk not yet handed on, and it ends by #start + maxChunkBytes. */
  #buffer: Buffer;
  #start = 0;
  #used = 0;
  #full: Buffer[] = [];
  #scheduled = false;
  #timer: NodeJS.Timeout | undefined;
  #lastFlushAt = -Infinity;
  #closed = false;
  readonly #flush = () => this.flush();

  constructor(sink: LineSink, { maxChunkBytes, intervalMs = LINE_BATCH_INTERVAL_MS, now = () => performance.now() }: { maxChunkBytes: number; intervalMs?: number; now?: () => number }) {
    this.#sink = sink;
    this.#maxChunkBytes = maxChunkBytes;
    this.#buffer = Buffer.allocUnsafe(Math.max(SLAB_BYTES, maxChunkBytes));
    this.#intervalMs = intervalMs;
    this.#now = now;
  }

  /** Queues one line (newline included); dropped once closed. */
  write(line: string): boolean {
    return this.writeEncoded(TEXT_LINE, line);
  }

  /** Queues the line `encoder` writes for `value`, encoded in place; dropped once closed. */
  writeEncoded<T>(encoder: LineEncoder<T>, value: T): boolean {
    if (this.#closed) return false;
    const end = encoder.encode(value, this.#buffer, this.#used, this.#chunkLimit());
    if (end === NO_ROOM) this.#writeInNextChunk(encoder, value);
    else this.#used = end;
    if (!this.#scheduled) this.#schedule();
    return true;
  }

  #chunkLimit(): number {
    return Math.min(this.#start + this.#maxChunkBytes, this.#buffer.length);
  }

  /** The line did not fit in this chunk: it starts the next one, or, longer than a chunk, is a chunk alone. */
  #writeInNextChunk<T>(encoder: LineEncoder<T>, value: T): void {
    this.#endChunk();
    if (this.#buffer.length - this.#used < this.#maxChunkBytes) {
      this.#buffer = Buffer.allocUnsafe(this.#buffer.length);
      this.#start = this.#used = 0;
    }
    const end = encoder.encode(value, this.#buffer, this.#used, this.#chunkLimit());
    if (end !== NO_ROOM) {
      this.#used = end;
      return;
    }
    const alone = Buffer.allocUnsafe(encoder.maxBytes(value));
    this.#full.push(alone.subarray(0, encoder.encode(value, alone, 0, alone.length)));
  }

  /** The queued part of the buffer becomes a chunk of its own; the sink may keep it, so it is never written over. */
  #endChunk(): void {
    if (this.#used > this.#start) this.#full.push(this.#buffer.subarray(this.#start, this.#used));
    this.#start = this.#used;
  }

  #schedule(): void {
    this.#scheduled = true;
    const wait = this.#lastFlushAt + this.#intervalMs - this.#now();
    if (wait <= 0) setImmediate(this.#flush);
    else this.#timer = setTimeout(this.#flush, wait);
  }

  /** Hands every queued line to the sink now. */
  flush(): void {
    this.#scheduled = false;
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    this.#endChunk();
    if (this.#full.length === 0) return;
    this.#lastFlushAt = this.#now();
    const full = this.#full;
    this.#full = [];
    for (const chunk of full) this.#sink.write(chunk);
  }

  /** Flushes, then drops every later line: the sink is about to end. */
  close(): void {
    this.flush();
    this.#closed = true;
  }
}
