// GracefulShutdown with a fake listener: the drain begun without a stop (admin POST /drain) runs once, sends GOAWAY after its delay, and a later run() neither logs nor waits it again.
import t from "tap";
import { GracefulShutdown } from "../src/shutdown.js";
import { captureLog } from "./helpers/log-capture.js";

function setUp(delayMs: number) {
  const calls: string[] = [];
  const logs = captureLog();
  const drain = { draining: false };
  const shutdown = new GracefulShutdown({
    drain,
    log: logs.log,
    delayMs,
    timeoutMs: 1_000,
    server: {
      close: (done) => {
        calls.push("close");
        done();
      },
      closeIdleConnections: () => calls.push("closeIdle"),
      closeAllConnections: () => calls.push("closeAll"),
      goAway: () => calls.push("goAway"),
    },
    closeUpstream: async () => void calls.push("closeUpstream"),
    afterDrain: async (reason) => void calls.push(`afterDrain ${reason}`),
  });
  return { calls, logs, drain, shutdown };
}

t.test("beginDrain: draining at once, once; GOAWAY after the delay; the listener stays open", async (t) => {
  const { calls, logs, drain, shutdown } = setUp(0);
  let began = false;
  void shutdown.began.then(() => (began = true));
  t.equal(shutdown.beginDrain("POST /drain"), true);
  t.equal(shutdown.beginDrain("POST /drain"), false, "again: nothing more");
  t.equal(drain.draining, true);
  await shutdown.delayPassed();
  await Promise.resolve();
  t.equal(began, true);
  t.same(calls, ["goAway"], "HTTP/2 clients told, nothing closed");
  t.match(logs.records, [{ msg: "draining", reason: "POST /drain", shutdownDelayMs: 0 }]);
  t.equal(logs.records.length, 1);
});

t.test("run() after beginDrain: one draining line, the delay not served twice, the stop runs", async (t) => {
  const { calls, logs, shutdown } = setUp(30);
  shutdown.beginDrain("POST /drain");
  await shutdown.delayPassed();
  const before = performance.now();
  await shutdown.run("SIGTERM");
  t.ok(performance.now() - before < 30, "the 30 ms delay had passed: not waited again");
  t.same(logs.messages(), ["draining", "stopped"]);
  t.same(calls.filter((call) => call !== "goAway"), ["close", "closeIdle", "closeUpstream", "afterDrain SIGTERM"]);
});

t.test("run() while the admin drain's delay still runs waits only what is left of it; no GOAWAY of the admin drain after the stop began", async (t) => {
  const { calls, shutdown } = setUp(50);
  shutdown.beginDrain("POST /drain");
  const delayPassed = shutdown.delayPassed();
  await shutdown.run("SIGTERM");
  let passed = false;
  void delayPassed.then(() => (passed = true));
  await Promise.resolve();
  t.equal(passed, true, "run() returned after the delay, not before");
  t.notOk(calls.includes("goAway"), "the stop's own close tells HTTP/2 clients (closeIdleConnections)");
});

t.test("run() with skipDelay (the app exited) after an admin drain does not wait for its delay", async (t) => {
  const { calls, shutdown } = setUp(200);
  shutdown.beginDrain("POST /drain");
  await shutdown.run("app exited", { skipDelay: true });
  t.same(calls, ["close", "closeIdle", "closeUpstream", "afterDrain app exited"]);
});

t.test("run() with a listener that closes at once leaves no timer behind: the idle grace's is cleared, so a stopped process may end", async (t) => {
  const { shutdown } = setUp(0);
  const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length;
  const before = timers();
  await shutdown.run("SIGTERM");
  // At most as many: a timer of something else that ends meanwhile may only lower the count.
  t.ok(timers() <= before, `no timer of the shutdown still pending (${before} before, ${timers()} after)`);
});
