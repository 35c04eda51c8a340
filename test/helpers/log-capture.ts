// A pino logger whose records are kept as parsed objects, for asserting on fixed messages.
import { Writable } from "node:stream";
import { pino, type Logger } from "pino";

export interface LogRecord {
  readonly level: number;
  readonly msg: string;
  readonly [field: string]: unknown;
}

export interface CapturedLog {
  readonly log: Logger;
  readonly records: LogRecord[];
  /** The `msg` of every record, in order. */
  messages(): string[];
}

export function captureLog(): CapturedLog {
  const records: LogRecord[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n")) {
        if (line !== "") records.push(JSON.parse(line) as LogRecord);
      }
      done();
    },
  });
  // pino writes synchronously to a plain stream's write(), so records are there when the call returns.
  // debug, not trace: the per-scan trace line (a benchmark counter) would crowd the records.
  const log = pino({ level: "debug" }, sink);
  return { log, records, messages: () => records.map((record) => record.msg) };
}
