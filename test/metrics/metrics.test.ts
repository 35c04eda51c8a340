// Metrics through a real daemon: exact counts after known traffic, parsed by a real exposition-format parser, checked by promtool where present.
import { spawnSync } from "node:child_process";
import { request, type ClientRequest } from "node:http";
import { join } from "node:path";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import t from "tap";
import { send } from "../helpers/http-client.js";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { closedPort, deferred } from "../helpers/test-doubles.js";
import { startUpstream } from "../helpers/upstream.js";

const fixtures = join(import.meta.dirname, "../../proc-fixtures");
const hasPromtool = spawnSync("promtool", ["--version"]).status === 0;

async function scrape(port: number) {
  const reply = await send(port, "/metrics");
  return { reply, families: parsePrometheusTextFormat(reply.text()) };
}

/** One sample line's value, by its exact series (the parser above merges labelled histograms into one, so those are read as text). */
function seriesValue(text: string, series: string): number | undefined {
  const line = text.split("\n").find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** The value of `name` whose labels include `labels`; undefined when no such sample. */
function valueOf(families: ReturnType<typeof parsePrometheusTextFormat>, name: string, labels: Record<string, string> = {}): number | undefined {
  const sample = families.find((family) => family.name === name)?.metrics.find((candidate) => Object.entries(labels).every(([key, value]) => candidate.labels?.[key] === value));
  return sample?.value === undefined ? (sample?.count === undefined ? undefined : Number(sample.count)) : Number(sample.value);
}

t.test("counts after known traffic: codes and methods, health paths excluded, 504 as timeout, 502 as refused", async (t) => {
  const upstream = await startUpstream(t);
  upstream.handle((req, res) => {
    if (req.url === "/slow") return; // never answers: 504
    res.statusCode = req.method === "POST" ? 201 : 200;
    res.end("ok");
  });
  const daemon = await startTestDaemon(t, [
    "--upstream", upstream.url,
    "--metrics-listen", "127.0.0.1:0",
    "--response-header-timeout", "100ms",
    "--proc-root", join(fixtures, "established-only"),
    "--readiness-required-listener", "15008",
  ]);
  for (let index = 0; index < 3; index++) await send(daemon.port, "/a");
  await send(daemon.port, "/b", { method: "POST", body: "x" });
  await send(daemon.port, "/c", { method: "PURGE" });
  await send(daemon.port, "/health");
  await send(daemon.port, "/healthz");
  await send(daemon.port, "/readyz");
  await send(daemon.port, "/readyz/shutdown");
  t.equal((await send(daemon.port, "/slow")).status, 504);
  // No wait for in-flight counts to settle: the relay reports an exchange's end before its last byte is written.
  const { reply, families } = await scrape(daemon.metricsPort!);
  t.equal(reply.status, 200);
  t.match(reply.headers["content-type"], /^text\/plain; version=0\.0\.4/);
  const requests = (labels: Record<string, string>) => valueOf(families, "readiness_proxy_requests_total", labels);
  t.equal(requests({ code: "200", method: "GET" }), 3);
  t.equal(requests({ code: "201", method: "POST" }), 1);
  t.equal(requests({ code: "200", method: "OTHER" }), 1, "an unknown method collapses to OTHER");
  t.equal(requests({ code: "504", method: "GET" }), 1);
  const total = families.find((family) => family.name === "readiness_proxy_requests_total")!.metrics.reduce((sum, sample) => sum + Number(sample.value), 0);
  t.equal(total, 6, "health paths are not counted");
  t.equal(valueOf(families, "readiness_proxy_upstream_errors_total", { reason: "timeout" }), 1);
  t.equal(valueOf(families, "readiness_proxy_upstream_errors_total", { reason: "refused" }), 0);
  const text = reply.text();
  t.equal(seriesValue(text, 'readiness_proxy_request_duration_seconds_count{code="200"}'), 4, "histogram count by code (3 GET, 1 PURGE)");
  t.equal(seriesValue(text, 'readiness_proxy_request_duration_seconds_bucket{le="+Inf",code="200"}'), 4);
  // At least the 100 ms head timeout; undici checks it on ~1 s timer ticks, so no upper bound is asserted.
  t.equal(seriesValue(text, 'readiness_proxy_request_duration_seconds_bucket{le="0.05",code="504"}'), 0, "the 504 waited for the head timeout");
  t.equal(seriesValue(text, 'readiness_proxy_request_duration_seconds_bucket{le="+Inf",code="504"}'), 1);
  t.equal(valueOf(families, "readiness_proxy_requests_in_flight"), 0);
  t.equal(valueOf(families, "readiness_proxy_ready"), 0);
  t.equal(valueOf(families, "readiness_proxy_check_ok", { check: "listener-15008" }), 0);
  t.equal(valueOf(families, "readiness_proxy_check_ok", { check: "shutdown" }), 1);
  t.equal(valueOf(families, "readiness_proxy_draining"), 0);
  t.equal(valueOf(families, "readiness_proxy_socket_table_scans_total"), 1, "one scan: the cache served the rest");
  t.equal(valueOf(families, "readiness_proxy_socket_table_unreadable", { table: "tcp" }), 0);
  t.equal(valueOf(families, "readiness_proxy_build_info", { version: "0.1.0", node_version: process.version }), 1);
  t.ok(families.some((family) => family.name === "process_cpu_seconds_total"), "prom-client's default metrics");
  const again = await scrape(daemon.metricsPort!);
  t.equal(valueOf(again.families, "readiness_proxy_socket_table_scans_total"), 1, "a scrape never runs a check");
  t.equal(valueOf(again.families, "readiness_proxy_requests_total", { code: "200", method: "GET" }), 3, "counters are stable across scrapes");
});

t.test("a refused upstream, a ready pod, draining", async (t) => {
  const daemon = await startTestDaemon(t, ["--upstream", `http://127.0.0.1:${await closedPort()}`, "--metrics-listen", "127.0.0.1:0", "--shutdown-delay", "2s"]);
  t.equal((await send(daemon.port, "/x")).status, 502);
  await send(daemon.port, "/readyz");
  let { families } = await scrape(daemon.metricsPort!);
  t.equal(valueOf(families, "readiness_proxy_upstream_errors_total", { reason: "refused" }), 1);
  t.equal(valueOf(families, "readiness_proxy_requests_total", { code: "502", method: "GET" }), 1);
  t.equal(valueOf(families, "readiness_proxy_ready"), 1);
  const drained = daemon.shutdown.run("SIGTERM");
  t.teardown(() => drained);
  ({ families } = await scrape(daemon.metricsPort!));
  t.equal(valueOf(families, "readiness_proxy_draining"), 1);
  t.equal(valueOf(families, "readiness_proxy_ready"), 0);
  t.equal(valueOf(families, "readiness_proxy_check_ok", { check: "shutdown" }), 0);
});

t.test("in flight while a stream is open; back to 0 when it ends or its client goes away", async (t) => {
  const upstream = await startUpstream(t);
  const release = deferred();
  const upstreamSawClose = deferred();
  upstream.handleRaw((req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write("data: 1\n\n");
    req.once("close", () => upstreamSawClose.resolve());
    void release.promise.then(() => res.end("data: 2\n\n"));
  });
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url, "--metrics-listen", "127.0.0.1:0"]);
  const inFlight = async () => valueOf((await scrape(daemon.metricsPort!)).families, "readiness_proxy_requests_in_flight");
  const stream = () =>
    new Promise<ClientRequest>((resolve) => {
      const req = request({ host: "127.0.0.1", port: daemon.port, path: "/stream", agent: false }, (res) => res.once("data", () => resolve(req)));
      req.end();
    });
  const first = await stream();
  t.equal(await inFlight(), 1, "an open stream is in flight");
  const second = await stream();
  t.equal(await inFlight(), 2);
  second.destroy();
  await upstreamSawClose.promise; // the proxy ends its side before it aborts the upstream request
  t.equal(await inFlight(), 1, "a client that went away is no longer in flight");
  release.resolve();
  await new Promise((resolve) => first.once("close", resolve));
  t.equal(await inFlight(), 0);
});

t.test("the metrics listener: /metrics only, GET and HEAD only; never on the proxy's listener", async (t) => {
  const upstream = await startUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url, "--metrics-listen", "127.0.0.1:0"]);
  t.equal((await send(daemon.metricsPort!, "/")).status, 404);
  t.equal((await send(daemon.metricsPort!, "/metrics/x")).status, 404);
  t.equal((await send(daemon.metricsPort!, "/metrics?x=1")).status, 200);
  const post = await send(daemon.metricsPort!, "/metrics", { method: "POST" });
  t.equal(post.status, 405);
  t.equal(post.headers.allow, "GET, HEAD");
  const head = await send(daemon.metricsPort!, "/metrics", { method: "HEAD" });
  t.equal(head.status, 200);
  t.equal(head.body.length, 0);
  t.equal((await send(daemon.port, "/metrics")).text(), "ok", "the proxy's /metrics is the upstream's");
});

t.test("without --metrics-listen nothing is served and prom-client is never loaded", async (t) => {
  const daemon = await startTestDaemon(t, []);
  t.equal(daemon.metricsPort, undefined);
});

t.test("promtool check metrics accepts the output", { skip: !hasPromtool && "promtool is not installed (Debian package prometheus; .ci/run installs it)" }, async (t) => {
  const upstream = await startUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url, "--metrics-listen", "127.0.0.1:0", "--readiness-required-listener", "15008", "--proc-root", join(fixtures, "listen-tcp-only")]);
  await send(daemon.port, "/x");
  await send(daemon.port, "/readyz");
  const { reply } = await scrape(daemon.metricsPort!);
  const check = spawnSync("promtool", ["check", "metrics"], { input: reply.body });
  t.equal(`${check.stdout}${check.stderr}`, "", "no complaints at all");
  t.equal(check.status, 0);
});
