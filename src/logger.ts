// Creates the process loggers: pino JSON on stdout, lifecycle lines written at once, access lines batched, neither waiting on a pipe's reader (no transports: a SEA cannot load their worker files).
import { pino, type Logger, type Level } from "pino";
import type { AccessSink } from "./access-log/access-sink.js";
import { LineBatch } from "./access-log/line-batch.js";
import { openStdoutDestinations, PIPE_BUF, type StdoutDestinations } from "./access-log/stdout-sink.js";

/** The levels `--log-level` accepts. */
export const LOG_LEVELS: readonly Level[] = ["fatal", "error", "warn", "info", "debug", "trace"];

/** How long {@link ProcessLog.end} waits for stdout to take more of the last lines before it gives up on a reader that stopped reading. */
export const LOG_END_TIMEOUT_MS = 1_000;

/** pino's own record shape (numeric `level`, epoch `time`), so existing pino tooling reads it. */
export function createLogger(level: Level, destination: pino.DestinationStream): Logger {
  return pino({ level, base: { name: "readiness-proxy" } }, destination);
}

/**
 * The process's two loggers on the one stdout. Lifecycle and warning lines (`listening`,
 * `draining`, `stopping app`, transitions: a few per state change) are written at once when
 * stdout takes them, so each is out before what it announces happens: the app in the entrypoint
 * form writes to the same stdout, and `stopping app` must come before the app's own reaction to
 * the signal. Access lines, one per request, are gathered (src/access-log/line-batch.ts) and
 * written without the request ever waiting on stdout. On a pipe neither kind ever waits for a
 * reader that stopped (src/access-log/stdout-sink.ts): lines past a bound are dropped, counted,
 * and reported once it reads again, and lifecycle lines go before access lines that wait. Each
 * write of either is whole lines, one write in flight at a time, so the two never tear each
 * other's lines; shared with the app, at most PIPE_BUF bytes a write, so the app's lines cannot
 * tear ours either (alone, access chunks are larger: fewer wake-ups of the reader). Each stream
 * keeps its own order, and the two may reorder across a batch.
 */
export interface ProcessLog {
  /** Lifecycle, transitions, warnings: written at once. */
  readonly log: Logger;
  /** `--access-log`'s lines: batched, flushed by end(). */
  readonly accessLog: Logger;
  /**
   * Writes out every line logged so far, then resolves: the last step before process.exit, so
   * that `stopped`, `uncaught exception` and the last access lines are not lost. Lines logged
   * after it are dropped (the level turns silent). If stdout takes nothing for `timeoutMs` (a
   * reader that stopped reading) the rest is dropped and it resolves anyway: exiting late is
   * worse than a lost line, and the kubelet's SIGKILL would come first.
   */
  end(timeoutMs?: number): Promise<void>;
  /** After end(): a write to stdout is still stuck in the kernel on a thread-pool thread, which process.exit() would wait for forever (src/stuck-write-exit.ts). */
  writeStuck(): boolean;
  /** Our lifecycle lines so far are on stdout, or `timeoutMs` passed (stdout stalled): what the app writes to the same stdout next comes after them. */
  lifecycleWritten(timeoutMs: number): Promise<void>;
}

/** What the drop counts are reported to, once stdout has caught up. */
export interface DropReports {
  readonly onDropped: (lines: number) => void;
  readonly onUrgentDropped: (lines: number) => void;
}

/**
 * `open` makes stdout's destinations (src/access-log/stdout-sink.ts by default; a test gives a
 * file's). The lifecycle destination is a stream that only writes, never flushSync() (pino's
 * fatal() calls its stream's flushSync() after the line; measured with sonic-boom: `uncaught
 * exception` after a burst put a 4 KiB block out of order in about 1 run of 10).
 */
export function createProcessLog(level: Level, open: (reports: DropReports) => StdoutDestinations = openStdoutDestinations): ProcessLog {
  // Said once stdout has caught up (the sinks wait for that), so the warning itself does not wait on a full pipe.
  const destinations = open({
    onDropped: (dropped) => log.warn({ dropped }, "access log lines dropped"),
    onUrgentDropped: (dropped) => log.warn({ dropped }, "log lines dropped"),
  });
  const log = createLogger(level, destinations.lifecycle);
  let sink: AccessSink | undefined;
  const batch = new LineBatch({ write: (chunk: Buffer) => (sink ??= destinations.openAccessSink()).write(chunk) }, { maxChunkBytes: destinations.maxChunkBytes ?? PIPE_BUF });
  const accessLog = createLogger(level, batch);
  let ended: Promise<void> | undefined;
  const end = (timeoutMs = LOG_END_TIMEOUT_MS) =>
    (ended ??= (async () => {
      accessLog.level = "silent";
      // This turn's lines first: they were logged before end() and must not be lost.
      batch.close();
      await destinations.end(timeoutMs);
    })());
  return {
    log,
    accessLog,
    end,
    writeStuck: () => destinations.writeStuck?.() ?? false,
    lifecycleWritten: async (timeoutMs) => destinations.lifecycleWritten?.(timeoutMs),
  };
}
