// The access log through a real daemon (CONTRACT §11): one `request` line per finished proxied request, every field, no query string, aborts, proxy-made errors, the queue's time.
import { request } from "node:http";
import t, { type Test } from "tap";
import { send, type Reply } from "../helpers/http-client.js";
import { startGatedUpstream } from "../helpers/gated-upstream.js";
import { startTestDaemon, type TestDaemon } from "../helpers/in-process-daemon.js";
import type { LogRecord } from "../helpers/log-capture.js";
import { untilSeries } from "../helpers/scrape.js";
import { closedPort } from "../helpers/test-doubles.js";
import { startUpstream } from "../helpers/upstream.js";

const SECRET = "s3cr3t-t0ken";

function accessLines(daemon: TestDaemon): LogRecord[] {
  return daemon.logs.records.filter((record) => record.msg === "request");
}

/** The line of the request whose path is `path` (there must be exactly one). */
function lineFor(t: Test, daemon: TestDaemon, path: string): LogRecord {
  const lines = accessLines(daemon).filter((line) => line.path === path);
  t.equal(lines.length, 1, `one line for ${path}`);
  return lines[0] ?? { level: 0, msg: "missing" };
}

/** A proxy-made error's line: its status, its id the same as the body's and X-Request-Id, no upstreamMs. */
function checkErrorLine(t: Test, line: LogRecord, reply: Reply): void {
  const requestId = reply.headers["x-request-id"];
  t.match(line, { status: reply.status, requestId, bytesSent: reply.body.length, remoteAddr: "127.0.0.1" });
  t.match(reply.json(), { error: { requestId } }, "the id of the error body");
  t.notOk("upstreamMs" in line, "no upstreamMs: the proxy made the answer");
}

t.test("one info line per finished request: method, path without the query, status, bytes, times, id, peer, user agent", async (t) => {
  const upstream = await startUpstream(t);
  upstream.handleRaw((req, res) => {
    req.resume();
    if (req.url?.startsWith("/chunked")) {
      res.write("abc");
      res.end("defg");
    } else res.end("hello");
  });
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url, "--access-log"]);
  const reply = await send(daemon.port, `/v1/items?token=${SECRET}&x=1`, { headers: { "user-agent": "e2e-agent/1.0", "x-request-id": "req-abc" } });
  t.equal(reply.text(), "hello");
  const line = lineFor(t, daemon, "/v1/items");
  // pid and hostname come from the test's logger (the process logger leaves them out).
  const { time, durationMs, upstreamMs, pid: _pid, hostname: _hostname, ...fixed } = line;
  t.type(time, "number");
  t.same(fixed, { level: 30, method: "GET", path: "/v1/items", protocol: "HTTP/1.1", status: 200, bytesSent: 5, requestId: "req-abc", remoteAddr: "127.0.0.1", userAgent: "e2e-agent/1.0", msg: "request" }, "no queueMs without --max-concurrency, no aborted");
  t.ok(typeof upstreamMs === "number" && typeof durationMs === "number" && upstreamMs >= 0 && durationMs >= upstreamMs, "0 <= upstreamMs <= durationMs");
  await send(daemon.port, "/chunked", { method: "POST", body: "x" });
  t.match(lineFor(t, daemon, "/chunked"), { method: "POST", status: 200, bytesSent: 7 }, "body bytes, not chunk framing");
  t.match(lineFor(t, daemon, "/chunked").requestId, /^[0-9a-f-]{36}$/, "an id made by the proxy when the client sent none");
  t.notMatch(JSON.stringify(daemon.logs.records), SECRET, "the query's token is nowhere in the log");
});

t.test("health paths are not logged; POST /readyz is proxied, so it is", async (t) => {
  const upstream = await startUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url, "--access-log"]);
  for (const path of ["/health", "/healthz", "/readyz", "/readyz?verbose", "/readyz/shutdown"]) t.equal((await send(daemon.port, path)).status, 200, path);
  t.same(accessLines(daemon), [], "no line for a health path");
  await send(daemon.port, "/readyz", { method: "POST" });
  t.match(accessLines(daemon), [{ method: "POST", path: "/readyz", status: 200 }]);
});

t.test("without --access-log no line is written", async (t) => {
  const upstream = await startUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  await send(daemon.port, "/x");
  t.same(accessLines(daemon), []);
});

t.test("proxy-made errors: the 502's and the 503's lines carry the error body's request id and no upstreamMs", async (t) => {
  const down = await startTestDaemon(t, ["--upstream", `http://127.0.0.1:${await closedPort()}`, "--access-log"]);
  const badGateway = await send(down.port, "/down");
  t.equal(badGateway.status, 502);
  checkErrorLine(t, lineFor(t, down, "/down"), badGateway);
  const app = await startGatedUpstream(t);
  const full = await startTestDaemon(t, ["--upstream", app.url, "--access-log", "--max-concurrency", "1", "--max-queue", "0"]);
  const held = send(full.port, "/held");
  await app.arrivals(1);
  const refused = await send(full.port, "/refused", { headers: { "x-request-id": "refused-1" } });
  t.equal(refused.status, 503);
  const line = lineFor(t, full, "/refused");
  checkErrorLine(t, line, refused);
  t.equal(line.queueMs, 0, "refused at once: no time queued");
  app.arrived[0]!.release();
  await held;
});

t.test("the query string never reaches any line at info or above, proxy-made errors included", async (t) => {
  const down = await startTestDaemon(t, ["--upstream", `http://127.0.0.1:${await closedPort()}`, "--access-log"]);
  await send(down.port, `/down?token=${SECRET}`);
  const app = await startGatedUpstream(t);
  const full = await startTestDaemon(t, ["--upstream", app.url, "--access-log", "--max-concurrency", "1", "--max-queue", "0"]);
  const held = send(full.port, "/held");
  await app.arrivals(1);
  t.equal((await send(full.port, `/refused?token=${SECRET}`)).status, 503);
  app.arrived[0]!.release();
  await held;
  for (const daemon of [down, full]) {
    const leaking = daemon.logs.records.filter((record) => record.level >= 30 && JSON.stringify(record).includes(SECRET));
    t.same(leaking.map((record) => record.msg), [], "no line carries the token");
  }
});

t.test("with --max-concurrency every line has queueMs: 0 when admitted at once, the wait when queued", async (t) => {
  const app = await startGatedUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", app.url, "--access-log", "--max-concurrency", "1", "--queue-timeout", "30s", "--metrics-listen", "127.0.0.1:0"]);
  const first = send(daemon.port, "/first");
  await app.arrivals(1);
  const second = send(daemon.port, "/second");
  await untilSeries(daemon.metricsPort!, "readiness_proxy_queue_length", 1);
  app.arrived[0]!.release();
  (await app.arrivals(2))[1]!.release();
  await Promise.all([first, second]);
  t.match(lineFor(t, daemon, "/first"), { status: 200, queueMs: 0 });
  const queued = lineFor(t, daemon, "/second");
  t.ok(Number(queued.queueMs) > 0, "the queued one's wait");
  t.ok(Number(queued.upstreamMs) >= Number(queued.queueMs), "its upstreamMs includes the wait (both from the request's start)");
});

/** A client that leaves while its request is queued behind one the app holds; returns that request's line. */
async function leaveWhileQueued(t: Test): Promise<LogRecord> {
  const app = await startGatedUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", app.url, "--access-log", "--max-concurrency", "1", "--queue-timeout", "30s", "--metrics-listen", "127.0.0.1:0"]);
  const held = send(daemon.port, "/held");
  await app.arrivals(1);
  const leaver = request({ host: "127.0.0.1", port: daemon.port, path: "/leaver", agent: false });
  leaver.on("error", () => {});
  leaver.end();
  await untilSeries(daemon.metricsPort!, "readiness_proxy_queue_length", 1);
  leaver.destroy();
  // Its line is written as it leaves the queue.
  await untilSeries(daemon.metricsPort!, "readiness_proxy_queue_length", 0);
  app.arrived[0]!.release();
  await held;
  return lineFor(t, daemon, "/leaver");
}

t.test("a client that leaves while queued gets its line: status 0, aborted, no upstreamMs", async (t) => {
  const line = await leaveWhileQueued(t);
  t.match(line, { status: 0, aborted: true, bytesSent: 0 });
  t.type(line.queueMs, "number");
  t.notOk("upstreamMs" in line);
});

t.test("a client that leaves while queued: its queueMs is the time it waited", async (t) => {
  const line = await leaveWhileQueued(t);
  t.ok(Number(line.queueMs) > 0, `queueMs ${String(line.queueMs)}`);
});

t.test("a client that goes away before the head: status 0, aborted, no upstreamMs", async (t) => {
  const app = await startGatedUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", app.url, "--access-log"]);
  const req = request({ host: "127.0.0.1", port: daemon.port, path: "/before-head", agent: false });
  req.on("error", () => {});
  req.end();
  const [held] = await app.arrivals(1);
  req.destroy();
  await held!.aborted; // the proxy cut the app's request just before it wrote the line
  const line = lineFor(t, daemon, "/before-head");
  t.match(line, { status: 0, bytesSent: 0, aborted: true });
  t.notOk("upstreamMs" in line);
});

t.test("a client that goes away mid-response: the status and the body bytes relayed, aborted", async (t) => {
  const app = await startGatedUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", app.url, "--access-log"]);
  const req = request({ host: "127.0.0.1", port: daemon.port, path: "/mid-response", agent: false }, (res) => res.once("data", () => req.destroy()));
  req.on("error", () => {});
  req.end();
  const [held] = await app.arrivals(1);
  held!.res.writeHead(200, { "content-type": "text/event-stream" });
  held!.res.write("data:");
  await held!.aborted;
  const line = lineFor(t, daemon, "/mid-response");
  t.match(line, { status: 200, bytesSent: 5, aborted: true });
  t.type(line.upstreamMs, "number");
});
