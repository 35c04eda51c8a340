// A child process for test/process/log-flush.test.ts: logs a burst of access lines (asynchronous), then exits the way main.ts does: after a clean stop, an uncaught exception, or with nobody reading stdout.
import { createAccessLog } from "../../src/access-log/access-log.js";
import { MAX_QUEUED_BYTES } from "../../src/access-log/access-sink.js";
import { openStdoutDestinations } from "../../src/access-log/stdout-sink.js";
import { createProcessLog } from "../../src/logger.js";

// The bound on what may wait for stdout: the shipped one unless given (a burst larger than it, to a slow reader, loses lines by design).
const [mode = "exit", countText = "20000", maxQueuedBytes = String(MAX_QUEUED_BYTES)] = process.argv.slice(2);
const count = Number(countText);
const processLog = createProcessLog("info", (reports) => openStdoutDestinations({ ...reports, maxQueuedBytes: Number(maxQueuedBytes) }));
const { log } = processLog;
const access = createAccessLog(processLog.accessLog, true);
// As in main.ts: every exit after the log's end().
const exit = async (code: number): Promise<never> => {
  await processLog.end(mode === "stuck" ? 300 : undefined);
  process.exit(code);
};
process.on("uncaughtException", (error) => {
  log.fatal({ err: error }, "uncaught exception");
  void exit(1);
});

let sent = 0;
/** 500 lines a tick, as a busy proxy logs them: asynchronous writes are in flight when the end comes. */
function burst(): void {
  for (let index = 0; index < 500 && sent < count; index++, sent++) {
    access.record({ method: "GET", path: `/item/${sent}?q=1`, protocol: "HTTP/1.1", status: 200, bytesSent: 2, durationMs: 1.5, requestId: String(sent), remoteAddr: "::ffff:127.0.0.1", userAgent: "x".repeat(150) });
  }
  if (sent < count) {
    setImmediate(burst);
    return;
  }
  if (mode === "uncaught") {
    setImmediate(() => {
      throw new Error("boom");
    });
    return;
  }
  // Not when stuck: on a full FIFO that nobody reads the line would only wait, or be dropped, with the access lines.
  if (mode !== "stuck") log.info("stopped");
  void exit(0);
}
burst();
