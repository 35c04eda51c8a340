// The access log's lines (CONTRACT §11): every field, no query string ever, aborted, level gating, and the process destination they share with every other line.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import fc from "fast-check";
import { pino, type Level } from "pino";
import t from "tap";
import { createAccessLog, NO_ACCESS_LOG, peerIp, withoutQuery, type AccessLogEntry } from "../../src/access-log/access-log.js";
import { sonicBoomSink } from "../../src/access-log/sonic-boom-sink.js";
import { createLogger, createProcessLog } from "../../src/logger.js";
import type { LogRecord } from "../helpers/log-capture.js";

/** The process logger's record shape (createLogger), written to a sink that keeps parsed records. */
function capture(level: Level = "info") {
  const records: LogRecord[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n")) if (line !== "") records.push(JSON.parse(line) as LogRecord);
      done();
    },
  });
  return { log: createLogger(level, sink), records };
}

const ENTRY: AccessLogEntry = {
  method: "POST",
  path: "/v1/chat/completions?api_key=secret&stream=1",
  protocol: "HTTP/1.1",
  status: 200,
  bytesSent: 5_120,
  durationMs: 1_834.2217,
  upstreamMs: 212.0404,
  queueMs: 0,
  requestId: "6f1c0e0e-6a53-4a55-9d0b-3a4a3f0c2b1d",
  remoteAddr: "::ffff:10.0.0.7",
  userAgent: "curl/8.5.0",
};

t.test("one info line, msg request, every field in camelCase, durations to the microsecond", async (t) => {
  const { log, records } = capture();
  const access = createAccessLog(log, true);
  t.equal(access.enabled, true);
  access.record(ENTRY);
  t.equal(records.length, 1);
  const { time, ...record } = records[0]!;
  t.type(time, "number");
  t.same(record, {
    level: 30,
    name: "readiness-proxy",
    method: "POST",
    path: "/v1/chat/completions",
    protocol: "HTTP/1.1",
    status: 200,
    bytesSent: 5_120,
    durationMs: 1_834.222,
    upstreamMs: 212.04,
    queueMs: 0,
    requestId: "6f1c0e0e-6a53-4a55-9d0b-3a4a3f0c2b1d",
    remoteAddr: "10.0.0.7",
    userAgent: "curl/8.5.0",
    msg: "request",
  });
});

t.test("optional fields: upstreamMs absent for a proxy-made answer, queueMs only when given, aborted only when true", async (t) => {
  const { log, records } = capture();
  const access = createAccessLog(log, true);
  access.record({ ...ENTRY, status: 503, upstreamMs: undefined, queueMs: 10_000, userAgent: undefined });
  access.record({ ...ENTRY, queueMs: undefined, aborted: false });
  access.record({ ...ENTRY, status: 0, bytesSent: 0, upstreamMs: undefined, aborted: true });
  const [overloaded, plain, left] = records;
  t.notOk("upstreamMs" in overloaded!, "no upstream time for a proxy-made 503");
  t.equal(overloaded!.queueMs, 10_000);
  t.notOk("userAgent" in overloaded!, "no User-Agent sent, no field");
  t.notOk("queueMs" in plain!, "limiter off: no queueMs");
  t.notOk("aborted" in plain!, "aborted only when true");
  t.match(left, { status: 0, bytesSent: 0, aborted: true });
});

t.test("the query string never reaches the log: origin-form, absolute-form, odd targets", async (t) => {
  const cases: Array<[string, string]> = [
    ["/a/b?token=x", "/a/b"],
    ["/?x", "/"],
    ["/a?", "/a"],
    ["/a?b?c", "/a"],
    ["/a%3Fb?c", "/a%3Fb"],
    ["/%2F..%2F", "/%2F..%2F"],
    ["http://app.example:8080/v1/x?key=1", "http://app.example:8080/v1/x"],
    ["*", "*"],
    ["/no-query", "/no-query"],
  ];
  for (const [target, path] of cases) t.equal(withoutQuery(target), path, target);
  const { log, records } = capture();
  const access = createAccessLog(log, true);
  fc.assert(
    fc.property(fc.string({ unit: "binary-ascii" }), fc.string({ unit: "binary-ascii" }), (before, after) => {
      access.record({ ...ENTRY, path: `/${before.replaceAll("?", "")}?${after}` });
      const logged = records.at(-1)!.path as string;
      return !logged.includes("?") && logged === `/${before.replaceAll("?", "")}`;
    }),
  );
});

t.test("remote addresses: IPv4-mapped shown as IPv4, others as given", async (t) => {
  t.equal(peerIp("::ffff:192.0.2.1"), "192.0.2.1");
  t.equal(peerIp("192.0.2.1"), "192.0.2.1");
  t.equal(peerIp("::1"), "::1");
  t.equal(peerIp("2001:db8::ffff:1"), "2001:db8::ffff:1");
  t.equal(peerIp("::ffff:c000:201"), "::ffff:c000:201", "not in dotted form: left alone");
  t.equal(peerIp(undefined), undefined);
});

t.test("level gating: off without the flag, and silenced by --log-level warn (no per-request cost either way)", async (t) => {
  t.equal(createAccessLog(capture("info").log, false), NO_ACCESS_LOG);
  for (const level of ["warn", "error", "fatal"] as const) {
    const { log, records } = capture(level);
    const access = createAccessLog(log, true);
    t.equal(access, NO_ACCESS_LOG, level);
    access.record(ENTRY);
    t.same(records, []);
  }
  t.equal(createAccessLog(capture("debug").log, true).enabled, true, "debug includes info");
});

t.test("through the process destinations: access lines (asynchronous) and lifecycle lines (at once) in one file, whole, each stream in order, all out after end()", async (t) => {
  const file = join(t.testdir(), "stdout.log");
  const processLog = createProcessLog("info", (reports) => {
    const access = sonicBoomSink(pino.destination({ dest: file, sync: false, maxWrite: 4096, contentMode: "buffer" }), reports);
    return { lifecycle: pino.destination({ dest: file, sync: true }), openAccessSink: () => access, end: (timeoutMs) => access.end(timeoutMs) };
  });
  const access = createAccessLog(processLog.accessLog, true);
  processLog.log.info("listening");
  for (let index = 0; index < 2_000; index++) access.record({ ...ENTRY, requestId: String(index) });
  processLog.log.info("stopped");
  await processLog.end();
  access.record({ ...ENTRY, requestId: "after end: dropped, never thrown" });
  const lines = readFileSync(file, "utf8").split("\n").filter((line) => line !== "");
  const records = lines.map((line) => JSON.parse(line) as LogRecord);
  t.equal(records.length, 2_002, "every line whole: each parses");
  t.equal(records[0]!.msg, "listening", "a lifecycle line is out at once");
  t.equal(records.filter((record) => record.msg === "stopped").length, 1);
  t.ok(records.filter((record) => record.msg === "request").every((record, index) => record.requestId === String(index)), "access lines in order");
  t.equal(await processLog.end(), undefined, "a second end() resolves too");
});
