// Creates the process loggers: pino JSON on stdout, lifecycle lines written at once, access lines through an asynchronous destination (no transports: a SEA cannot load their worker files).
import { pino, type Logger, type Level } from "pino";
import { LineBatch } from "./access-log/line-batch.js";

/** The levels `--log-level` accepts. */
export const LOG_LEVELS: readonly Level[] = ["fatal", "error", "warn", "info", "debug", "trace"];

/** pino's own destination (sonic-boom). */
export type LogDestination = ReturnType<typeof pino.destination>;

/** Linux's PIPE_BUF: a write(2) of at most this many bytes to a pipe is atomic, never split or mixed with another writer's. */
const PIPE_BUF = 4096;

/** How long {@link ProcessLog.end} waits for stdout to take more of the last lines before it gives up on a reader that stopped reading. */
export const LOG_END_TIMEOUT_MS = 1_000;

/**
 * stdout, written asynchronously (CONTRACT §11): a line is handed to the kernel on the thread
 * pool while the event loop goes on, and lines logged meanwhile are written together after it,
 * so no request waits on a slow stdout and access lines cost one write per batch, not per line.
 * Nothing is held back when idle (no minLength): a line goes out at once. Chunks are capped at
 * PIPE_BUF, so each write of whole lines (up to 4 KiB each) is atomic on a pipe: never torn, and
 * never mixed with the app's own output on the same stdout (entrypoint form).
 */
export function stdoutDestination(): LogDestination {
  // Buffer mode: the access lines come encoded (src/access-log/line-batch.ts), and are written as they are.
  return pino.destination({ dest: 1, sync: false, maxWrite: PIPE_BUF, contentMode: "buffer" });
}

/** pino's own record shape (numeric `level`, epoch `time`), so existing pino tooling reads it. */
export function createLogger(level: Level, destination: pino.DestinationStream = stdoutDestination()): Logger {
  return pino({ level, base: { name: "readiness-proxy" } }, destination);
}

/**
 * The process's two loggers on the one stdout. Lifecycle and warning lines (`listening`,
 * `draining`, `stopping app`, transitions: a few per state change) are written synchronously, so
 * each is out before what it announces happens: the app in the entrypoint form writes to the
 * same stdout, and `stopping app` must come before the app's own reaction to the signal (with
 * one asynchronous stream it did not, under load, in test/process/entrypoint.test.ts). Access
 * lines, one per request, go through the asynchronous destination so that no request waits on
 * stdout. Each write of either is whole lines of at most PIPE_BUF bytes, so the two never tear
 * each other's lines; each stream keeps its own order.
 */
export interface ProcessLog {
  /** Lifecycle, transitions, warnings: written at once. */
  readonly log: Logger;
  /** `--access-log`'s lines: asynchronous, flushed by end(). */
  readonly accessLog: Logger;
  /**
   * Writes out every line logged so far, then resolves: the last step before process.exit, so
   * that `stopped`, `uncaught exception` and the last access lines are not lost. Lines logged
   * after it are dropped (the level turns silent). If stdout takes nothing for `timeoutMs` (a
   * reader that stopped reading) the rest is dropped and it resolves anyway: exiting late is
   * worse than a lost line, and the kubelet's SIGKILL would come first.
   */
  end(timeoutMs?: number): Promise<void>;
}

/**
 * Why not flushSync() before exit, as pino's own exit hook does: when an asynchronous write is
 * still on the thread pool, flushSync writes the lines after it first (measured: a block of lines
 * out of order in 2 or 3 exits of 10 right after a burst), and a partial write's rest is never
 * written. end() waits for the write in flight, then writes the rest in order, then closes.
 * For the same reason the logger is given a stream that only writes: pino's fatal() calls its
 * stream's flushSync() after the line (measured: `uncaught exception` after a burst put a 4 KiB
 * block out of order in about 1 run of 10).
 */
export function createProcessLog(
  level: Level,
  destination: LogDestination = stdoutDestination(),
  lifecycle: pino.DestinationStream = pino.destination({ dest: 1, sync: true }),
): ProcessLog {
  const log = createLogger(level, lifecycle);
  // Access lines are gathered and written together, a few times a second under load (src/access-log/line-batch.ts).
  // sonic-boom's types know only its utf8 mode; in buffer mode it takes Buffers.
  const batch = new LineBatch({ write: (chunk: Buffer) => destination.write(chunk as unknown as string) }, { maxChunkBytes: PIPE_BUF });
  const accessLog = createLogger(level, batch);
  let ended: Promise<void> | undefined;
  const end = (timeoutMs = LOG_END_TIMEOUT_MS) =>
    (ended ??= new Promise<void>((resolve) => {
      accessLog.level = "silent";
      // This turn's lines first: they were logged before end() and must not be lost.
      batch.close();
      const giveUp = () => {
        // destroy() marks it closed at once, so pino's exit hook does not flushSync (and spin on EAGAIN) after us.
        destination.destroy();
        resolve();
      };
      let timer = setTimeout(giveUp, timeoutMs);
      // A slow reader that still takes lines is waited for: only `timeoutMs` without progress gives up.
      const progressed = () => {
        clearTimeout(timer);
        timer = setTimeout(giveUp, timeoutMs);
      };
      const done = () => {
        clearTimeout(timer);
        destination.off("write", progressed);
        resolve();
      };
      destination.on("write", progressed);
      destination.once("close", done);
      destination.once("error", done);
      destination.end();
    }));
  return { log, accessLog, end };
}
