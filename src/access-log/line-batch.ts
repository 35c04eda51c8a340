// Gathers access lines and hands them to the asynchronous destination in whole-line chunks of at most PIPE_BUF bytes: at the end of the turn when idle, at most once per interval under load.

/** What the lines go to: pino's sonic-boom destination, or any stream with write(). */
export interface LineSink {
  write(chunk: string): unknown;
}

/** How often, at most, a batch that did not fill a chunk is handed on while lines keep coming. */
export const LINE_BATCH_INTERVAL_MS = 25;

/**
 * Why: every write of sonic-boom's is a trip through the thread pool (submit, a worker's
 * write(2), its completion back on the loop), and it starts the next as soon as one completes;
 * under load that was one write per line or two, and the trips cost more than the lines
 * (bench/README.md, "Access log"). So the first line after a quiet spell goes out at the end of
 * its turn (setImmediate, after the reads that finished its request), and while lines keep
 * coming they go at most every `intervalMs`, as many 4 KiB chunks as have gathered. A line is
 * never held longer than that, and end() (src/logger.ts) flushes the rest before exit.
 * Chunks stay whole lines of at most `maxChunkBytes` (PIPE_BUF), so each write(2) is atomic on a
 * pipe; sonic-boom keeps such chunks apart when it queues them. A longer line is a chunk alone.
 */
export class LineBatch implements LineSink {
  readonly #sink: LineSink;
  readonly #maxChunkBytes: number;
  readonly #intervalMs: number;
  readonly #now: () => number;
  #chunk = "";
  #chunkBytes = 0;
  #full: string[] = [];
  #scheduled = false;
  #timer: NodeJS.Timeout | undefined;
  #lastFlushAt = -Infinity;
  #closed = false;
  readonly #flush = () => this.flush();

  constructor(sink: LineSink, { maxChunkBytes, intervalMs = LINE_BATCH_INTERVAL_MS, now = () => performance.now() }: { maxChunkBytes: number; intervalMs?: number; now?: () => number }) {
    this.#sink = sink;
    this.#maxChunkBytes = maxChunkBytes;
    this.#intervalMs = intervalMs;
    this.#now = now;
  }

  /** Queues one line (newline included); dropped once closed. */
  write(line: string): boolean {
    if (this.#closed) return false;
    // A line of nothing but ASCII is as long in bytes as in UTF-16 units: the usual line costs no UTF-8 count.
    const bytes = NON_ASCII.test(line) ? Buffer.byteLength(line) : line.length;
    if (this.#chunkBytes + bytes > this.#maxChunkBytes && this.#chunkBytes > 0) {
      this.#full.push(this.#chunk);
      this.#chunk = "";
      this.#chunkBytes = 0;
    }
    this.#chunk += line;
    this.#chunkBytes += bytes;
    if (!this.#scheduled) this.#schedule();
    return true;
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
    if (this.#chunkBytes === 0 && this.#full.length === 0) return;
    this.#lastFlushAt = this.#now();
    const full = this.#full;
    if (full.length > 0) {
      this.#full = [];
      for (const chunk of full) this.#sink.write(chunk);
    }
    if (this.#chunkBytes > 0) {
      const chunk = this.#chunk;
      this.#chunk = "";
      this.#chunkBytes = 0;
      this.#sink.write(chunk);
    }
  }

  /** Flushes, then drops every later line: the sink is about to end. */
  close(): void {
    this.flush();
    this.#closed = true;
  }
}

const NON_ASCII = /[^\x00-\x7f]/;
