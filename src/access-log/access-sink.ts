// What the access log's batches are written to (a pipe of the process's own, or sonic-boom), the one bound on what may wait for stdout, and the count of what was dropped past it.
import type { LineSink } from "./line-batch.js";

/**
 * At most this many bytes of access lines wait in the process for stdout, on top of the pipe's
 * own buffer (64 KiB on Linux): about 4,000 lines of 270 bytes, seconds of traffic at the rates
 * a pod sees and 0.3 s at this project's bench peak (bench/README.md). A reader held up longer
 * than that has stopped (a stuck log collector), and holding more would only bring a 64 MiB
 * pod's OOM kill closer; so past it lines are dropped and counted, never the process's memory.
 */
export const MAX_QUEUED_BYTES = 1024 * 1024;

/** A destination for whole-line chunks (src/access-log/line-batch.ts), bounded, that can be ended. */
export interface AccessSink extends LineSink {
  /**
   * Writes out what is queued, then closes. Resolves once it is written, or once stdout has
   * taken nothing for `timeoutMs` (a reader that stopped: the rest is dropped). Chunks written
   * after it are dropped.
   */
  end(timeoutMs: number): Promise<void>;
}

/** What both sinks are given. */
export interface AccessSinkOptions {
  /** Bytes that may wait for stdout before chunks are dropped; {@link MAX_QUEUED_BYTES} by default. */
  readonly maxQueuedBytes?: number;
  /** Told how many lines were dropped, once the sink has caught up again (its queue empty): at most once per episode. */
  readonly onDropped?: (lines: number) => void;
}

const NEWLINE = 0x0a;

/**
 * Counts the lines of the chunks a sink could not keep, and reports them once it has caught up:
 * a report while stdout is still full would itself wait for it (the process log's lines are
 * written synchronously, src/logger.ts), so it comes when there is room, with the whole count.
 */
export class DroppedLines {
  readonly #report: (lines: number) => void;
  #lines = 0;

  constructor(report: (lines: number) => void = () => {}) {
    this.#report = report;
  }

  /** A chunk of whole lines that will never be written. */
  add(chunk: Buffer): void {
    for (let at = chunk.indexOf(NEWLINE); at !== -1; at = chunk.indexOf(NEWLINE, at + 1)) this.#lines++;
  }

  /** The sink's queue is empty again: one report of everything dropped since the last, if anything was. */
  caughtUp(): void {
    if (this.#lines === 0) return;
    const lines = this.#lines;
    this.#lines = 0;
    this.#report(lines);
  }
}
