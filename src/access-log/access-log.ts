// The access log (CONTRACT §11): one `request` line per finished proxied request, written to the process logger's asynchronous destination.
import { pino, type Logger } from "pino";
import type { AccessLogEntry } from "./access-log-entry.js";
import { AccessLineWriter } from "./access-line.js";
import { LineBatch } from "./line-batch.js";

export { peerIp, withoutQuery } from "./access-line.js";
export type { AccessLogEntry } from "./access-log-entry.js";


/** Where the relay reports finished requests. */
export interface AccessLog {
  /** False for the no-op: the relay may then skip gathering an entry at all. */
  readonly enabled: boolean;
  /** Logs one line; the entry is read synchronously and not kept (a caller may reuse one object per connection). */
  record(entry: AccessLogEntry): void;
}

/** Access log off, or the log level above info. */
export const NO_ACCESS_LOG: AccessLog = { enabled: false, record() {} };

/**
 * The access log for `--access-log`, writing to `log`'s own stream (the process logger's: same
 * stdout, same asynchronous destination, so lines never interleave and are flushed by its end()),
 * in the shape of `log`'s records (its level numbers, time and bindings). It is decided once here
 * whether lines are written at all: with `--log-level warn` or above, or without the flag, the
 * caller gets the no-op and pays nothing per request.
 */
export function createAccessLog(log: Logger, enabled: boolean): AccessLog {
  return enabled && log.isLevelEnabled("info") ? new LineAccessLog(log) : NO_ACCESS_LOG;
}

/**
 * Writes each line itself instead of handing pino an object: with a serializer made for the one
 * line, the log costs a fraction of what pino's generic one did (bench/README.md, "Access log").
 * pino's internals read here are its documented `pino.symbols`.
 */
class LineAccessLog implements AccessLog {
  readonly enabled = true;
  /** The logger's own stream: src/logger.ts's LineBatch for the process log, any pino stream in tests. */
  readonly #stream: { write(line: string): unknown };
  /** The same stream when it is a LineBatch, which takes the line's bytes written in place. */
  readonly #batch: LineBatch | undefined;
  readonly #writer: AccessLineWriter;
  readonly #log: Logger;
  readonly #info: number;

  constructor(log: Logger) {
    this.#log = log;
    this.#info = log.levels.values.info!;
    const internals = log as unknown as Record<symbol, unknown>;
    this.#stream = internals[pino.symbols.streamSym] as { write(line: string): unknown };
    this.#batch = this.#stream instanceof LineBatch ? this.#stream : undefined;
    const time = internals[pino.symbols.timeSym] as () => string;
    this.#writer = new AccessLineWriter({
      level: log.levels.values.info!,
      time,
      // pino's default time field (src/logger.ts keeps it): the line writes Date.now()'s digits itself.
      epochMs: time === pino.stdTimeFunctions.epochTime ? Date.now : undefined,
      bindings: internals[pino.symbols.chindingsSym] as string,
      messageKey: internals[pino.symbols.messageKeySym] as string,
    });
  }

  record(entry: AccessLogEntry): void {
    // The level may be raised at run time (admin PUT /log-level): one comparison per line.
    if (this.#log.levelVal > this.#info) return;
    if (this.#batch !== undefined) this.#batch.writeEncoded(this.#writer, entry);
    else this.#stream.write(this.#writer.line(entry));
  }
}
