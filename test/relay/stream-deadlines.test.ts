// The deadlines' rule over a hand-moved clock: quiet for the idle time ends an exchange (never earlier), moving bytes keep it alive, the head wait and tunnels are exempt where the contract says, one timer only while watching.
import t from "tap";
import { StreamDeadlines, sweepIntervalMs, type DeadlineKind, type WatchedExchange } from "../../src/relay/stream-deadlines.js";
import { ManualTimers } from "../helpers/test-doubles.js";

class FakeExchange implements WatchedExchange {
  activity = 0;
  idleApplies = true;
  durationApplies = true;
  ended: DeadlineKind[] = [];
  deadlineReached(kind: DeadlineKind): void {
    this.ended.push(kind);
  }
}

function setUp(idleMs: number, maxDurationMs: number) {
  const clock = new ManualTimers(1000);
  const faults: unknown[] = [];
  const deadlines = new StreamDeadlines({ idleMs, maxDurationMs, timers: clock, reportFault: (error) => faults.push(error) });
  /** Advances the clock by `ms` in sweeps of `step`. */
  const pass = (ms: number, step = 100) => {
    for (let done = 0; done < ms; done += step) {
      clock.time += step;
      deadlines.sweep();
    }
  };
  return { clock, deadlines, pass, faults };
}

t.test("the sweep period: an eighth of the shorter limit, 50 ms to 1 s", async (t) => {
  t.equal(sweepIntervalMs(3000, 0), 375);
  t.equal(sweepIntervalMs(0, 60_000), 1000);
  t.equal(sweepIntervalMs(100, 0), 50);
  t.equal(sweepIntervalMs(3000, 800), 100);
});

t.test("an SSE stream sending every 2 s lives through a 3 s idle timeout; once it stops it ends after 3 s, not before", async (t) => {
  const { deadlines, pass } = setUp(3000, 0);
  const sse = new FakeExchange();
  deadlines.watch(sse);
  for (let event = 0; event < 30; event++) {
    pass(2000);
    sse.activity += 20;
  }
  t.same(sse.ended, [], "a minute of events every 2 s");
  pass(2900);
  t.same(sse.ended, [], "quiet for 2.9 s: still open");
  pass(300);
  t.same(sse.ended, ["idle"], "quiet past 3 s: ended once");
  t.equal(deadlines.watching, 0, "no longer watched");
  pass(5000);
  t.same(sse.ended, ["idle"], "never told twice");
});

t.test("waiting for the head with the request all sent is the head timeout's, not the idle one's", async (t) => {
  const { deadlines, pass } = setUp(1000, 0);
  const exchange = new FakeExchange();
  exchange.idleApplies = false;
  deadlines.watch(exchange);
  pass(10_000);
  t.same(exchange.ended, []);
  exchange.idleApplies = true; // the head came
  pass(900);
  t.same(exchange.ended, []);
  pass(200);
  t.same(exchange.ended, ["idle"]);
});

t.test("a stalled upload (idle applies while the body is under way)", async (t) => {
  const { deadlines, pass } = setUp(500, 0);
  const upload = new FakeExchange();
  deadlines.watch(upload);
  for (let chunk = 0; chunk < 10; chunk++) {
    pass(300);
    upload.activity += 1;
  }
  t.same(upload.ended, []);
  pass(700);
  t.same(upload.ended, ["idle"]);
});

t.test("the duration ends a healthy stream; tunnels are exempt from it", async (t) => {
  const { deadlines, pass } = setUp(0, 5000);
  const stream = new FakeExchange();
  const tunnel = new FakeExchange();
  tunnel.durationApplies = false;
  deadlines.watch(stream);
  const tunnelWatch = deadlines.watch(tunnel);
  for (let step = 0; step < 49; step++) {
    pass(100);
    stream.activity++;
  }
  t.same(stream.ended, []);
  pass(100);
  t.same(stream.ended, ["duration"]);
  pass(60_000);
  t.same(tunnel.ended, [], "a WebSocket lives as long as it likes");
  deadlines.unwatch(tunnelWatch);
  deadlines.unwatch(tunnelWatch);
  t.equal(deadlines.watching, 0);
});

t.test("an exchange that throws while ending is reported and the sweep goes on", async (t) => {
  const { deadlines, pass, faults } = setUp(100, 0);
  const bad = new FakeExchange();
  bad.deadlineReached = () => {
    throw new Error("boom");
  };
  const good = new FakeExchange();
  deadlines.watch(bad);
  deadlines.watch(good);
  pass(300);
  t.equal(faults.length, 1);
  t.same(good.ended, ["idle"]);
});

t.test("exchanges leaving in any order: each one still watched ends once, none that left is told", async (t) => {
  const { deadlines, pass } = setUp(1000, 0);
  const exchanges = Array.from({ length: 50 }, () => new FakeExchange());
  const watches = exchanges.map((exchange) => deadlines.watch(exchange));
  for (let index = 0; index < 50; index += 3) deadlines.unwatch(watches[index]!);
  for (let index = 49; index >= 0; index -= 7) deadlines.unwatch(watches[index]!);
  const left = new Set([...Array(50).keys()].filter((index) => index % 3 === 0 || (49 - index) % 7 === 0));
  t.equal(deadlines.watching, 50 - left.size);
  pass(1100);
  exchanges.forEach((exchange, index) => t.same(exchange.ended, left.has(index) ? [] : ["idle"], `exchange ${index}`));
  t.equal(deadlines.watching, 0);
});
