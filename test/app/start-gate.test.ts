// The start gate (--app-start-wait): the app may start once the operator's ports listen; one look per cache TTL at most; the timeout's answer; the clock is moved by hand.
import t from "tap";
import { missingPorts, waitForListeners, type GateClock } from "../../src/app/start-gate.js";
import type { ReadinessReport } from "../../src/readiness/check-results.js";
import { ReadinessCheck } from "../../src/readiness/readiness-check.js";
import { captureLog } from "../helpers/log-capture.js";

class ManualClock implements GateClock {
  time = 0;
  readonly timers: Array<{ at: number; run: () => void }> = [];
  now(): number {
    return this.time;
  }
  setTimeout(run: () => void, ms: number): unknown {
    this.timers.push({ at: this.time + ms, run });
    return undefined;
  }
  /** Moves to the next timer and fires it; returns the time moved. */
  async fireNext(): Promise<number> {
    this.timers.sort((a, b) => a.at - b.at);
    const timer = this.timers.shift();
    if (!timer) throw new Error("no timer pending");
    const moved = timer.at - this.time;
    this.time = timer.at;
    timer.run();
    await settle();
    return moved;
  }
}

/** Lets every promise the last step settled run (the real cached check takes more than a few turns). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

const missing = (ports: number[], absent: number[]): ReadinessReport => ({ verdict: { state: "missing", ready: false, ports, missing: absent }, checks: [] });
const present = (ports: number[]): ReadinessReport => ({ verdict: { state: "present", ready: true, ports }, checks: [] });

t.test("missingPorts: only the operator's ports count (the app's own cannot listen before it starts); unreadable tables fail open", async (t) => {
  t.same(missingPorts(missing([8000, 15008], [8000, 15008]), [15008]), [15008]);
  t.same(missingPorts(missing([8000, 15008], [8000]), [15008]), []);
  t.same(missingPorts(present([15008]), [15008]), []);
  t.same(missingPorts({ verdict: { state: "not enforced", ready: true, ports: [15008], unreadableTables: [] } as never, checks: [] }, [15008]), []);
});

t.test("already listening: at once, no hold line, one look", async (t) => {
  const logs = captureLog();
  let looks = 0;
  const result = await waitForListeners({ ports: [15008], check: async () => (looks++, present([15008])), ttlMs: 1000, waitMs: 30_000, log: logs.log, clock: new ManualClock() });
  t.same(result, []);
  t.equal(looks, 1);
  t.same(logs.messages(), []);
});

t.test("held until the port listens: one look per TTL, the hold line once", async (t) => {
  const logs = captureLog();
  const clock = new ManualClock();
  let looks = 0;
  let listening = false;
  const check = async () => {
    looks++;
    return listening ? present([15008]) : missing([15008], [15008]);
  };
  let result: number[] | undefined;
  void waitForListeners({ ports: [15008], check, ttlMs: 1000, waitMs: 30_000, log: logs.log, clock }).then((value) => (result = value));
  for (let turn = 0; turn < 10; turn++) await Promise.resolve();
  t.equal(looks, 1);
  t.match(logs.records, [{ level: 30, msg: "holding the app until required listeners listen", missing: [15008] }]);
  t.equal(await clock.fireNext(), 1002, "the next look once the cached result has expired");
  t.equal(looks, 2);
  t.equal(result, undefined);
  listening = true;
  await clock.fireNext();
  t.same(result, [], "starts within one TTL of the port listening");
  t.equal(looks, 3);
  t.equal(logs.records.length, 1, "the hold line once");
});

t.test("the wait runs out: the ports still missing, no later than the wait", async (t) => {
  const logs = captureLog();
  const clock = new ManualClock();
  let result: number[] | undefined;
  void waitForListeners({ ports: [15001, 15008], check: async () => missing([15001, 15008], [15008]), ttlMs: 1000, waitMs: 2_500, log: logs.log, clock }).then((value) => (result = value));
  for (let turn = 0; turn < 10; turn++) await Promise.resolve();
  await clock.fireNext();
  await clock.fireNext();
  t.equal(result, undefined);
  t.equal(await clock.fireNext(), 2_500 - 2 * 1002, "the last wait is cut to the deadline");
  t.same(result, [15008]);
  t.equal(clock.timers.length, 0);
});

t.test("a cache TTL of 0 does not make it spin", async (t) => {
  const clock = new ManualClock();
  void waitForListeners({ ports: [1], check: async () => missing([1], [1]), ttlMs: 0, waitMs: 1_000, log: captureLog().log, clock });
  for (let turn = 0; turn < 10; turn++) await Promise.resolve();
  t.equal(await clock.fireNext(), 50);
});

t.test("through the real cached check: one socket-table scan per look, shared with /readyz's callers, at most one per TTL", async (t) => {
  const clock = new ManualClock();
  const log = captureLog().log;
  let scans = 0;
  let listening = false;
  const readiness = new ReadinessCheck({
    requiredPorts: [8000, 15008],
    scanner: { scan: async () => (scans++, { listeningPorts: new Set(listening ? [15008] : []), unreadableTables: [] }) },
    log,
    ttlMs: 1000,
    clock,
  });
  let result: number[] | undefined;
  // The app's own 8000 is required by /readyz, never by the gate (it cannot listen yet).
  void waitForListeners({ ports: [15008], check: () => readiness.check(), ttlMs: 1000, waitMs: 60_000, log, clock }).then((value) => (result = value));
  await settle();
  await readiness.check();
  await readiness.check();
  t.equal(scans, 1, "the gate and two /readyz calls within the TTL: one scan");
  for (let look = 0; look < 5; look++) await clock.fireNext();
  t.equal(scans, 6, "one scan per TTL while held");
  listening = true;
  await clock.fireNext();
  t.same(result, [], "released by the next scan after the port listens");
  t.equal(scans, 7);
});
