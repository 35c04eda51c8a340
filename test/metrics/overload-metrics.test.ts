// The overload metrics (CONTRACT §10) from a real limiter moved by hand: exact values, both reasons from the first scrape, registered only with the limiter on, promtool where present.
import { spawnSync } from "node:child_process";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { pino } from "pino";
import { Registry } from "prom-client";
import t from "tap";
import { createMetrics } from "../../src/metrics/metrics.js";
import { OverloadMetrics } from "../../src/metrics/overload-metrics.js";
import { ConcurrencyLimiter, QueuedRequest } from "../../src/overload/concurrency-limiter.js";
import { RecordingWaiter, type WaiterEvent } from "../helpers/limiter-doubles.js";
import { ManualTimers } from "../helpers/test-doubles.js";

const hasPromtool = spawnSync("promtool", ["--version"]).status === 0;

/** One sample line's value, by its exact series text. */
function seriesValue(text: string, series: string): number | undefined {
  const line = text.split("\n").find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

t.test("from the first scrape: queue length 0, both reasons at 0, an empty histogram", async (t) => {
  const registry = new Registry();
  new OverloadMetrics(registry);
  const text = await registry.metrics();
  t.equal(seriesValue(text, "readiness_proxy_queue_length"), 0);
  t.equal(seriesValue(text, 'readiness_proxy_rejected_requests_total{reason="queue_full"}'), 0);
  t.equal(seriesValue(text, 'readiness_proxy_rejected_requests_total{reason="queue_timeout"}'), 0);
  t.equal(seriesValue(text, "readiness_proxy_queue_wait_seconds_count"), 0);
  t.equal(seriesValue(text, 'readiness_proxy_queue_wait_seconds_bucket{le="+Inf"}'), 0);
  t.match(text, /# TYPE readiness_proxy_queue_wait_seconds histogram/);
  t.match(text, /# TYPE readiness_proxy_rejected_requests_total counter/);
  t.match(text, /# TYPE readiness_proxy_queue_length gauge/);
  const families = parsePrometheusTextFormat(text);
  t.same(families.map((family) => family.name).sort(), ["readiness_proxy_queue_length", "readiness_proxy_queue_wait_seconds", "readiness_proxy_rejected_requests_total"]);
});

t.test("a limiter under load reports exact values: waits of 0, of a wait, of a timeout, of a client that left; refusals by reason", async (t) => {
  const registry = new Registry();
  const time = new ManualTimers();
  const events: WaiterEvent[] = [];
  const limiter = new ConcurrencyLimiter({ limit: 1, maxQueue: 2, queueTimeoutMs: 1_000, timers: time, observer: new OverloadMetrics(registry) });
  const waiter = (id: number) => new RecordingWaiter(id, events);
  t.equal(limiter.acquire(waiter(0)), "admitted"); // wait 0
  limiter.acquire(waiter(1)); // queued at 0
  limiter.acquire(waiter(2)); // queued at 0
  t.equal(limiter.acquire(waiter(3)), "rejected"); // queue_full: no wait observed
  let text = await registry.metrics();
  t.equal(seriesValue(text, "readiness_proxy_queue_length"), 2, "two waiting");
  t.equal(seriesValue(text, 'readiness_proxy_rejected_requests_total{reason="queue_full"}'), 1);
  time.advance(300);
  limiter.release(); // id 1 admitted after 0.3 s
  time.advance(700); // id 2 times out after 1 s
  const left = limiter.acquire(waiter(4)); // queued at 1000
  time.advance(20);
  t.ok(left instanceof QueuedRequest && left.cancel(), "the client left after 0.02 s");
  t.same(events.map((event) => `${event.id} ${event.event}`), ["1 admitted", "2 queue_timeout"]);
  text = await registry.metrics();
  t.equal(seriesValue(text, "readiness_proxy_queue_length"), 0);
  t.equal(seriesValue(text, 'readiness_proxy_rejected_requests_total{reason="queue_full"}'), 1);
  t.equal(seriesValue(text, 'readiness_proxy_rejected_requests_total{reason="queue_timeout"}'), 1);
  t.equal(seriesValue(text, "readiness_proxy_queue_wait_seconds_count"), 4, "admitted at once, admitted later, timed out, left");
  t.equal(seriesValue(text, 'readiness_proxy_queue_wait_seconds_bucket{le="0"}'), 1, "le=0: admitted at once");
  t.equal(seriesValue(text, 'readiness_proxy_queue_wait_seconds_bucket{le="0.025"}'), 2);
  t.equal(seriesValue(text, 'readiness_proxy_queue_wait_seconds_bucket{le="0.5"}'), 3);
  t.equal(seriesValue(text, 'readiness_proxy_queue_wait_seconds_bucket{le="1"}'), 4);
  t.equal(seriesValue(text, 'readiness_proxy_queue_wait_seconds_bucket{le="+Inf"}'), 4);
  t.ok(Math.abs(seriesValue(text, "readiness_proxy_queue_wait_seconds_sum")! - 1.32) < 1e-9, "0 + 0.3 + 1 + 0.02");
  const again = await registry.metrics();
  t.equal(seriesValue(again, 'readiness_proxy_rejected_requests_total{reason="queue_timeout"}'), 1, "stable across scrapes");
  t.equal(seriesValue(again, "readiness_proxy_queue_wait_seconds_count"), 4);
});

t.test("registered only with the limiter on", async (t) => {
  const parts = { listen: { host: "127.0.0.1", port: 0 }, checkNames: ["shutdown"], drain: { draining: false }, log: pino({ level: "silent" }) };
  const off = createMetrics(parts);
  t.equal(off.overload, undefined);
  t.notMatch(await off.registry.metrics(), /readiness_proxy_queue_|readiness_proxy_rejected_requests_total/);
  const on = createMetrics({ ...parts, overloadProtection: true });
  t.ok(on.overload instanceof OverloadMetrics);
  const text = await on.registry.metrics();
  for (const name of ["readiness_proxy_queue_length", "readiness_proxy_queue_wait_seconds_count", "readiness_proxy_rejected_requests_total"]) t.match(text, name);
  t.match(text, "readiness_proxy_requests_total", "beside the other metrics, in the one registry");
});

t.test("promtool check metrics accepts them", { skip: !hasPromtool && "promtool is not installed (Debian package prometheus; .ci/run installs it)" }, async (t) => {
  const registry = new Registry();
  const metrics = new OverloadMetrics(registry);
  metrics.queueWait(0);
  metrics.queueWait(0.2);
  metrics.rejected("queue_full");
  const check = spawnSync("promtool", ["check", "metrics"], { input: await registry.metrics() });
  t.equal(`${check.stdout}${check.stderr}`.trim(), "", "no complaints");
});
