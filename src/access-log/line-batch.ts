// Gathers access lines and hands them to the asynchronous destination in whole-line chunks of at most PIPE_BUF bytes: at the end of the turn when idle, at most once per interval under load.

/** What the chunks go to: stdout's access sink (src/access-log/stdout-sink.ts), or any stream with write(). */
export interface LineSink {
  write(chunk: Buffer): unknown;
}

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
  /** Lines are encoded into this once, as they come; [#start, #used) is the chunk not yet handed on. */
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
    this.#buffer = Buffer.allocUnsafe(maxChunkBytes);
    this.#intervalMs = intervalMs;
    this.#now = now;
  }

  /** Queues one line (newline included); dropped once closed. */
  write(line: string): boolean {
    if (this.#closed) return false;
    // UTF-8 takes at most 3 bytes per UTF-16 unit: when that much room is left, the line is
    // encoded straight in, and the bytes written are its length. Else it is measured first.
    if (line.length * 3 <= this.#buffer.length - this.#used) this.#used += this.#buffer.write(line, this.#used);
    else this.#writeMeasured(line);
    if (!this.#scheduled) this.#schedule();
    return true;
  }

  #writeMeasured(line: string): void {
    const bytes = Buffer.byteLength(line);
    if (this.#used + bytes > this.#buffer.length) {
      this.#endChunk();
      this.#buffer = Buffer.allocUnsafe(this.#maxChunkBytes);
      this.#start = this.#used = 0;
    }
    if (bytes > this.#buffer.length) this.#full.push(Buffer.from(line));
    else this.#used += this.#buffer.write(line, this.#used);
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
