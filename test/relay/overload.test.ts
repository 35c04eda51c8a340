// Overload protection through a real daemon and a slow app (CONTRACT §10): the limit at the app, FIFO admission, 503 overloaded when full or timed out, health paths untouched, the queue metrics.
import t, { type Test } from "tap";
import { send, type Reply } from "../helpers/http-client.js";
import { startGatedUpstream } from "../helpers/gated-upstream.js";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import type { LogRecord } from "../helpers/log-capture.js";
import { scrapeText, seriesValue, untilSeries } from "../helpers/scrape.js";
import { ManualTimers } from "../helpers/test-doubles.js";

const QUEUE_LENGTH = "readiness_proxy_queue_length";
const BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
/** A queue timeout no test reaches: admissions then depend on the test's releases alone. */
const NEVER = "30s";

function overloadArgs(upstreamUrl: string, limit: number, ...more: string[]): string[] {
  return ["--upstream", upstreamUrl, "--max-concurrency", String(limit), "--metrics-listen", "127.0.0.1:0", ...more];
}

/** The JSON 503 of §10, its id the same in the body and X-Request-Id; returns that id. */
function checkOverloadedJson(t: Test, reply: Reply): string {
  t.equal(reply.status, 503);
  t.equal(reply.headers["retry-after"], "1");
  t.equal(reply.headers["content-type"], "application/json");
  const requestId = String(reply.headers["x-request-id"]);
  t.equal(reply.text(), JSON.stringify({ error: { code: 503, message: "overloaded", requestId } }), "the exact envelope");
  return requestId;
}

function overloadedLines(records: readonly LogRecord[]): LogRecord[] {
  return records.filter((record) => record.msg === "overloaded");
}

/** A limit of 1 and a queue of 1, both taken: `/held` at the app, `/queued` waiting; `finish()` answers both and returns their statuses. */
async function fillSlotAndQueue(t: Test) {
  const app = await startGatedUpstream(t);
  const daemon = await startTestDaemon(t, overloadArgs(app.url, 1, "--max-queue", "1", "--queue-timeout", NEVER));
  const held = send(daemon.port, "/held");
  await app.arrivals(1);
  const queued = send(daemon.port, "/queued");
  await untilSeries(daemon.metricsPort!, QUEUE_LENGTH, 1);
  const finish = async () => {
    app.arrived[0]!.release();
    (await app.arrivals(2))[1]!.release();
    return [(await held).status, (await queued).status];
  };
  return { app, daemon, finish };
}

t.test("30 clients at --max-concurrency 3: the app never holds more than 3, and every client is answered", async (t) => {
  const app = await startGatedUpstream(t);
  const daemon = await startTestDaemon(t, overloadArgs(app.url, 3, "--queue-timeout", NEVER));
  const clients = 30;
  const replies = Array.from({ length: clients }, (_, index) => send(daemon.port, `/r/${index}`));
  await app.arrivals(3);
  await untilSeries(daemon.metricsPort!, QUEUE_LENGTH, clients - 3);
  t.equal(app.inApp, 3, "3 at the app while the other 27 wait at the proxy");
  // Each round answers every request the app holds (releasing in arrival order), then waits for
  // the freed slots to fill again: the app is as busy as the limit allows throughout.
  let released = 0;
  for (let round = 0; released < clients && round < clients; round++) {
    const held = app.arrived.slice(released);
    for (const request of held) request.release(`answer ${request.url}`);
    released += held.length;
    if (released < clients) await app.arrivals(Math.min(clients, released + 3));
  }
  const answers = await Promise.all(replies);
  t.same(answers.map((reply) => reply.status), Array(clients).fill(200));
  t.same(answers.map((reply) => reply.text()), Array.from({ length: clients }, (_, index) => `answer /r/${index}`), "each client got its own answer");
  t.equal(app.mostInApp, 3, "never more than the limit at the app");
  t.equal(app.arrived.length, clients, "each request reached the app once");
});

t.test("admission is first come, first served", async (t) => {
  const app = await startGatedUpstream(t);
  const daemon = await startTestDaemon(t, overloadArgs(app.url, 1, "--queue-timeout", NEVER));
  const first = send(daemon.port, "/first");
  await app.arrivals(1);
  // Queued one at a time, each seen in the queue before the next is sent: a known order.
  const order = ["/q3", "/q1", "/q5", "/q2", "/q4"];
  const queued: Array<Promise<Reply>> = [];
  for (const [index, path] of order.entries()) {
    queued.push(send(daemon.port, path));
    await untilSeries(daemon.metricsPort!, QUEUE_LENGTH, index + 1);
  }
  for (let index = 0; index < order.length; index++) {
    app.arrived[index]!.release();
    await app.arrivals(index + 2);
  }
  app.arrived.at(-1)!.release();
  t.same(app.arrived.map((request) => request.url), ["/first", ...order], "admitted in the order they were queued");
  t.same((await Promise.all([first, ...queued])).map((reply) => reply.status), Array(order.length + 1).fill(200));
  t.equal(app.mostInApp, 1);
});

t.test("queue full: an immediate 503 overloaded with Retry-After: 1, JSON or the branded page; the app never sees it", async (t) => {
  const { app, daemon, finish } = await fillSlotAndQueue(t);
  // Answered while the app still holds its one request: nothing waited for a slot.
  const json = await send(daemon.port, "/refused-json", { headers: { accept: "application/json" } });
  const jsonId = checkOverloadedJson(t, json);
  t.equal(json.headers["cache-control"], "no-store");
  const page = await send(daemon.port, "/refused-page", { headers: { accept: BROWSER, "x-request-id": "client-id-4" } });
  t.equal(page.status, 503);
  t.equal(page.headers["retry-after"], "1");
  t.equal(page.headers["content-type"], "text/html; charset=utf-8");
  t.equal(page.headers["x-request-id"], "client-id-4", "the client's own id is kept");
  t.match(page.text(), /^<!doctype html>/);
  t.match(page.text(), '<p class="status">503</p>');
  t.match(page.text(), "<code>client-id-4</code>");
  t.equal(app.arrived.length, 1, "the app holds its one request and saw neither refusal");
  t.same(await finish(), [200, 200]);
  t.same(app.arrived.map((request) => request.url), ["/held", "/queued"]);
  // One warn line per kind, the rest of its window at debug (throttled like the other per-request warnings).
  t.match(overloadedLines(daemon.logs.records), [
    { level: 40, reason: "queue full", requestId: jsonId, method: "GET", queueMs: 0 },
    { level: 20, reason: "queue full", requestId: "client-id-4" },
  ]);
});

t.test("queue timeout: 503 overloaded once --queue-timeout has passed, never earlier; the app never sees it", async (t) => {
  const app = await startGatedUpstream(t);
  const timers = new ManualTimers();
  const daemon = await startTestDaemon(t, overloadArgs(app.url, 1, "--queue-timeout", "200ms", "--access-log"), undefined, { timers });
  const held = send(daemon.port, "/held");
  await app.arrivals(1);
  let answered = false;
  const timingOut = send(daemon.port, "/waits").finally(() => (answered = true));
  await untilSeries(daemon.metricsPort!, QUEUE_LENGTH, 1);
  timers.advance(199);
  t.equal(seriesValue(await scrapeText(daemon.metricsPort!), QUEUE_LENGTH), 1, "199 ms: still queued");
  t.equal(answered, false, "not answered before the queue timeout");
  timers.advance(1);
  const timedOut = await timingOut;
  const requestId = checkOverloadedJson(t, timedOut);
  t.equal(app.arrived.length, 1, "the app never saw the timed-out request");
  const [line] = overloadedLines(daemon.logs.records);
  t.match(line, { level: 40, reason: "queue timeout", requestId, method: "GET" });
  t.equal(line?.queueMs, 200, "the line says how long it waited");
  const access = daemon.logs.records.find((record) => record.msg === "request" && record.path === "/waits");
  t.match(access, { status: 503, requestId, bytesSent: timedOut.body.length });
  t.equal(access?.queueMs, 200, "its access line has the wait too");
  t.notOk(access !== undefined && "upstreamMs" in access, "and no upstreamMs");
  app.arrived[0]!.release();
  t.equal((await held).status, 200);
});

t.test("time in the queue does not count toward --response-header-timeout", async (t) => {
  const app = await startGatedUpstream(t);
  const daemon = await startTestDaemon(t, overloadArgs(app.url, 1, "--queue-timeout", NEVER, "--response-header-timeout", "300ms"));
  // The first answers its head at once and holds its slot with an open body.
  const stream = send(daemon.port, "/stream");
  const [streaming] = await app.arrivals(1);
  streaming!.res.writeHead(200, { "content-type": "text/event-stream" });
  streaming!.res.write("data: 1\n\n");
  const queued = send(daemon.port, "/queued");
  await untilSeries(daemon.metricsPort!, QUEUE_LENGTH, 1);
  // The quantity under test is time itself: the wait must outlast the head timeout.
  await new Promise((resolve) => setTimeout(resolve, 450));
  streaming!.release("data: 2\n\n");
  (await app.arrivals(2))[1]!.release("answered");
  const reply = await queued;
  t.equal(reply.status, 200, "not 504: the head timeout started when it was sent to the app");
  t.equal(reply.text(), "answered");
  t.equal((await stream).text(), "data: 1\n\ndata: 2\n\n");
});

t.test("health paths answer at once while the limit and the queue are full; /readyz is not failed by overload", async (t) => {
  const { app, daemon, finish } = await fillSlotAndQueue(t);
  checkOverloadedJson(t, await send(daemon.port, "/more"));
  for (const [path, body] of [
    ["/health", '{"status":"ok"}'],
    ["/healthz", '{"status":"ok"}'],
    ["/readyz", '{"status":"ready"}'],
    ["/readyz/shutdown", "ok"],
  ] as const) {
    const reply = await send(daemon.port, path);
    t.equal(reply.status, 200, path);
    t.equal(reply.text(), body, `${path} says ${body}`);
  }
  t.equal(seriesValue(await scrapeText(daemon.metricsPort!), QUEUE_LENGTH), 1, "health probes were never queued");
  t.equal(app.arrived.length, 1, "the app was still holding its one request throughout");
  t.same(await finish(), [200, 200]);
});

t.test("metrics: queue length, wait histogram, rejections by reason, 503s in requests_total, queued requests not in flight", async (t) => {
  const app = await startGatedUpstream(t);
  // 1 s on hand-moved timers: the scrapes below happen while the request is queued, however slow the machine.
  const timers = new ManualTimers();
  const daemon = await startTestDaemon(t, overloadArgs(app.url, 1, "--max-queue", "1", "--queue-timeout", "1s"), undefined, { timers });
  const metricsPort = daemon.metricsPort!;
  let text = await scrapeText(metricsPort);
  for (const series of [QUEUE_LENGTH, 'readiness_proxy_rejected_requests_total{reason="queue_full"}', 'readiness_proxy_rejected_requests_total{reason="queue_timeout"}', "readiness_proxy_queue_wait_seconds_count"]) {
    t.equal(seriesValue(text, series), 0, `${series} is 0 from the first scrape`);
  }
  const held = send(daemon.port, "/held"); // admitted at once: a wait of 0
  await app.arrivals(1);
  const timingOut = send(daemon.port, "/queued"); // will wait the full second
  await untilSeries(metricsPort, QUEUE_LENGTH, 1);
  text = await scrapeText(metricsPort);
  t.equal(seriesValue(text, "readiness_proxy_requests_in_flight"), 1, "the queued request is not in flight");
  t.equal((await send(daemon.port, "/full")).status, 503); // queue full: not a wait
  timers.advance(1_000);
  checkOverloadedJson(t, await timingOut);
  text = await scrapeText(metricsPort);
  t.equal(seriesValue(text, QUEUE_LENGTH), 0);
  t.equal(seriesValue(text, 'readiness_proxy_rejected_requests_total{reason="queue_full"}'), 1);
  t.equal(seriesValue(text, 'readiness_proxy_rejected_requests_total{reason="queue_timeout"}'), 1);
  t.equal(seriesValue(text, 'readiness_proxy_requests_total{code="503",method="GET"}'), 2, "both refusals count as 503s");
  t.equal(seriesValue(text, "readiness_proxy_queue_wait_seconds_count"), 2, "the one admitted at once and the one timed out (a queue-full refusal never waited)");
  t.equal(seriesValue(text, 'readiness_proxy_queue_wait_seconds_bucket{le="0"}'), 1);
  t.equal(seriesValue(text, 'readiness_proxy_queue_wait_seconds_bucket{le="0.5"}'), 1, "the timed-out one waited its second");
  t.ok(seriesValue(text, "readiness_proxy_queue_wait_seconds_sum")! >= 1);
  // One more queued behind the held request, admitted when it ends: a wait above 0.
  const later = send(daemon.port, "/later");
  await untilSeries(metricsPort, QUEUE_LENGTH, 1);
  timers.advance(100);
  app.arrived[0]!.release();
  (await app.arrivals(2))[1]!.release();
  t.same([(await held).status, (await later).status], [200, 200]);
  text = await scrapeText(metricsPort);
  t.equal(seriesValue(text, "readiness_proxy_queue_wait_seconds_count"), 3, "every request that went through the limiter");
  t.equal(seriesValue(text, 'readiness_proxy_queue_wait_seconds_bucket{le="0"}'), 1, "only the first was admitted without waiting");
  t.equal(seriesValue(text, 'readiness_proxy_requests_total{code="200",method="GET"}'), 2);
  t.equal(seriesValue(text, "readiness_proxy_requests_in_flight"), 0);
});
