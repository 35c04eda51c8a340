// Named checks through a real daemon: ?verbose and ?exclude byte for byte, /readyz/<name>, what stays the upstream's, a hung app's bounded answer.
import { join } from "node:path";
import t, { type Test } from "tap";
import { send } from "../helpers/http-client.js";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { closedPort, ManualTimers } from "../helpers/test-doubles.js";
import { startUpstream } from "../helpers/upstream.js";

const fixtures = join(import.meta.dirname, "../../proc-fixtures");

/** A daemon requiring 15008 over `fixture`, in front of an upstream whose /ready answers `status`. */
async function setUp(t: Test, fixture: string, readyStatus: number, extraArgs: string[] = [], timers?: ManualTimers) {
  const upstream = await startUpstream(t);
  upstream.handle((req, res) => {
    res.statusCode = req.url === "/ready" ? readyStatus : 200;
    res.end(`upstream ${req.url}`);
  });
  const daemon = await startTestDaemon(t, [
    "--upstream", `${upstream.url}/prefix`,
    "--proc-root", join(fixtures, fixture),
    "--readiness-required-listener", "15008",
    "--readiness-upstream-path", "/ready",
    ...extraArgs,
  ], undefined, timers && { timers });
  return { upstream, daemon };
}

t.test("a healthy pod, verbose", async (t) => {
  const { daemon, upstream } = await setUp(t, "listen-tcp6-only", 200);
  const reply = await send(daemon.port, "/readyz?verbose");
  t.equal(reply.status, 200);
  t.equal(reply.headers["content-type"], "text/plain; charset=utf-8");
  t.equal(reply.headers["cache-control"], "no-store");
  t.equal(reply.text(), "[+]listener-15008 ok\n[+]upstream ok\n[+]shutdown ok\nreadyz check passed\n");
  t.equal(upstream.received.find((request) => request.url.includes("ready"))?.url, "/ready", "the probe skips the --upstream path prefix");
  t.equal((await send(daemon.port, "/readyz")).text(), '{"status":"ready"}');
});

t.test("a failing pod: verbose, exclude, JSON, per check", async (t) => {
  const { daemon } = await setUp(t, "established-only", 500);
  const verbose = await send(daemon.port, "/readyz?verbose=1");
  t.equal(verbose.status, 503);
  t.equal(verbose.text(), "[-]listener-15008 failed: not listening\n[-]upstream failed: status 500\n[+]shutdown ok\nreadyz check failed\n");
  const json = await send(daemon.port, "/readyz");
  t.equal(json.status, 503);
  t.equal(json.text(), '{"status":"not ready","missingListeners":[15008],"failedChecks":["listener-15008","upstream"]}');
  const excluded = await send(daemon.port, "/readyz?verbose&exclude=upstream&exclude=listener-15008&exclude=typo");
  t.equal(excluded.status, 200);
  t.equal(
    excluded.text(),
    '[+]listener-15008 excluded: ok\n[+]upstream excluded: ok\n[+]shutdown ok\nwarn: some health checks cannot be excluded: no matches for "typo"\nreadyz check passed\n',
  );
  t.equal((await send(daemon.port, "/readyz?exclude=typo")).status, 503, "an unknown exclude is never a 4xx, and excludes nothing");
  const listener = await send(daemon.port, "/readyz/listener-15008");
  t.equal(listener.status, 503);
  t.equal(listener.headers["content-type"], "text/plain; charset=utf-8");
  t.equal(listener.text(), "listener-15008 failed: not listening\n");
  t.equal((await send(daemon.port, "/readyz/upstream")).text(), "upstream failed: status 500\n");
  const shutdown = await send(daemon.port, "/readyz/shutdown?verbose");
  t.equal(shutdown.status, 200);
  t.equal(shutdown.text(), "ok");
  const head = await send(daemon.port, "/readyz/shutdown", { method: "HEAD" });
  t.equal(head.status, 200);
  t.equal(head.body.length, 0);
});

t.test("a /readyz/… path that names no check exactly is ours: 404 with the configured names, never the app's", async (t) => {
  const { daemon, upstream } = await setUp(t, "established-only", 200);
  for (const path of ["/readyz/nope", "/readyz/listener-15008/", "/readyz/listener%2D15008", "/readyz/%2e%2e/health", "/readyz/../readyz", "/readyz/", "/readyz/SHUTDOWN", "/readyz/listener-9000?verbose"]) {
    const reply = await send(daemon.port, path);
    t.equal(reply.status, 404, path);
    t.equal(reply.headers["content-type"], "application/json", `${path}: JSON`);
    t.equal(reply.text(), '{"error":"no such check","checks":["listener-15008","upstream","shutdown"]}', `${path}: the configured names, in check order`);
    const head = await send(daemon.port, path, { method: "HEAD" });
    t.equal(head.status, 404, `HEAD ${path}`);
    t.equal(head.body.length, 0, `HEAD ${path}: no body`);
  }
  t.notOk(upstream.received.some((request) => request.url.startsWith("/prefix/readyz")), "none reached the app");
  t.equal((await send(daemon.port, "/readyz/shutdown", { method: "POST" })).text(), "upstream /prefix/readyz/shutdown", "POST is the upstream's");
  t.equal((await send(daemon.port, "/readyzx")).text(), "upstream /prefix/readyzx", "a path that only begins like /readyz is the upstream's");
});

t.test("a hung app: /readyz answers within the probe timeout, never later", async (t) => {
  const upstream = await startUpstream(t);
  upstream.handleRaw(() => {}); // never answers
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url, "--readiness-upstream-path", "/ready", "--readiness-upstream-timeout", "200ms", "--readiness-cache-ttl", "0s"]);
  const started = performance.now();
  const reply = await send(daemon.port, "/readyz?verbose");
  const elapsed = performance.now() - started;
  t.equal(reply.status, 503);
  t.equal(reply.text(), "[-]upstream failed: timeout after 200ms\n[+]shutdown ok\nreadyz check failed\n");
  t.comment(`answered in ${elapsed.toFixed(0)} ms with a 200 ms probe timeout`);
});

t.test("an app that refuses: not ready, logged once", async (t) => {
  const daemon = await startTestDaemon(t, ["--upstream", `http://127.0.0.1:${await closedPort()}`, "--readiness-upstream-path", "/ready", "--readiness-cache-ttl", "0s"]);
  t.equal((await send(daemon.port, "/readyz/upstream")).text(), "upstream failed: connection refused\n");
  await send(daemon.port, "/readyz");
  const lines = daemon.logs.records.filter((record) => record.msg === "upstream health check failing; reporting not ready");
  t.equal(lines.length, 1);
  // Refused from the first probe: a start (info), with the same reason as /readyz/upstream.
  t.match(lines[0], { level: 30, path: "/ready", reason: "connection refused", err: /ECONNREFUSED/ });
});

t.test("while draining: failedChecks names shutdown, and ?exclude=shutdown reads the other checks", async (t) => {
  // The delay on hand-moved timers: the four requests below come within it however loaded the machine.
  const timers = new ManualTimers();
  const { daemon } = await setUp(t, "established-only", 200, ["--shutdown-delay", "2s"], timers);
  const drained = daemon.shutdown.run("SIGTERM");
  const json = await send(daemon.port, "/readyz");
  t.equal(json.status, 503);
  t.equal(json.text(), '{"status":"not ready","missingListeners":[15008],"draining":true,"failedChecks":["listener-15008","shutdown"]}');
  t.equal((await send(daemon.port, "/readyz/shutdown")).text(), "shutdown failed: draining\n");
  t.equal(
    (await send(daemon.port, "/readyz?verbose&exclude=shutdown")).text(),
    "[-]listener-15008 failed: not listening\n[+]upstream ok\n[+]shutdown excluded: ok\nreadyz check failed\n",
  );
  t.equal((await send(daemon.port, "/health")).status, 200, "liveness unchanged");
  await timers.until(drained, 10_000);
});
