// GracefulShutdown with a fake listener on hand-moved timers: the drain begun without a stop (admin POST /drain) runs once, sends GOAWAY after its delay (not before), and a later run() neither logs nor waits it again; the grace and the timeout at their time.
import t from "tap";
import { GracefulShutdown } from "../src/shutdown.js";
import { captureLog } from "./helpers/log-capture.js";
import { ManualTimers } from "./helpers/test-doubles.js";

/** Lets the promises a step settled run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

function setUp(delayMs: number, closesAtOnce = true) {
  const calls: string[] = [];
  const timers = new ManualTimers();
  const logs = captureLog();
  const drain = { draining: false };
  const shutdown = new GracefulShutdown({
    drain,
    log: logs.log,
    delayMs,
    timeoutMs: 1_000,
    timers,
    server: {
      close: (done) => {
        calls.push("close");
        if (closesAtOnce) done();
      },
      closeIdleConnections: () => calls.push("closeIdle"),
      closeAllConnections: () => calls.push("closeAll"),
      goAway: () => calls.push("goAway"),
    },
    closeUpstream: async () => void calls.push("closeUpstream"),
    afterDrain: async (reason) => void calls.push(`afterDrain ${reason}`),
  });
  return { calls, logs, drain, shutdown, timers };
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
  const { calls, logs, shutdown, timers } = setUp(30);
  shutdown.beginDrain("POST /drain");
  timers.advance(30);
  await shutdown.delayPassed();
  await shutdown.run("SIGTERM");
  t.pass("the 30 ms delay had passed: not waited again (the clock did not move)");
  t.same(logs.messages(), ["draining", "stopped"]);
  t.same(calls.filter((call) => call !== "goAway"), ["close", "closeIdle", "closeUpstream", "afterDrain SIGTERM"]);
});

t.test("run() while the admin drain's delay still runs waits only what is left of it; no GOAWAY of the admin drain after the stop began", async (t) => {
  const { calls, shutdown, timers } = setUp(50);
  shutdown.beginDrain("POST /drain");
  timers.advance(20);
  let stopped = false;
  const running = shutdown.run("SIGTERM").then(() => (stopped = true));
  timers.advance(29);
  await settle();
  t.equal(stopped, false, "49 ms into the 50 ms delay: still serving");
  t.same(calls, [], "nothing closed yet");
  timers.advance(1);
  await running;
  t.pass("run() returned at the delay's end, with no more time waited");
  t.notOk(calls.includes("goAway"), "the stop's own close tells HTTP/2 clients (closeIdleConnections)");
});

t.test("run() with skipDelay (the app exited) after an admin drain does not wait for its delay", async (t) => {
  const { calls, shutdown } = setUp(200);
  shutdown.beginDrain("POST /drain");
  await shutdown.run("app exited", { skipDelay: true });
  t.pass("no time moved: the delay was not waited");
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

t.test("a listener that does not close: idle connections get the grace (1 s), then the timeout (1 s) runs out, to the millisecond; then the rest are cut", async (t) => {
  const { calls, logs, shutdown, timers } = setUp(0, false);
  let stopped = false;
  const running = shutdown.run("SIGTERM").then(() => (stopped = true));
  await settle();
  t.same(calls, ["close"], "the listener closes; idle connections keep their grace");
  timers.advance(999);
  await settle();
  t.same(calls, ["close"], "999 ms: still in the grace");
  timers.advance(1);
  await settle();
  t.same(calls, ["close", "closeIdle"], "at 1 s the idle ones close");
  timers.advance(999);
  await settle();
  t.equal(stopped, false, "999 ms into the timeout: in-flight requests still have time");
  timers.advance(1);
  await running;
  t.same(calls, ["close", "closeIdle", "closeAll", "closeUpstream", "afterDrain SIGTERM"]);
  t.match(logs.records.find((record) => record.msg === "stopped"), { cutShort: true });
  t.ok(logs.messages().includes("shutdown timeout reached; closing remaining connections"));
});

t.test("while the shutdown waits on its timers the process stays, and nothing is left once it is done", async (t) => {
  const { shutdown, timers } = setUp(100, false);
  const count = () => process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length;
  const before = count();
  const running = shutdown.run("SIGTERM");
  await settle();
  t.ok(count() > before, "a runtime handle holds the process through the delay (the daemon's timers do not)");
  for (let step = 0; step < 4; step++) {
    timers.advance(1_000);
    await settle();
  }
  await running;
  t.ok(count() <= before, `nothing of the shutdown left pending (${before} before, ${count()} after)`);
});
