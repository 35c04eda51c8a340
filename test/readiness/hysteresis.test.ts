// Rise and fall in the check runner: --readiness-failure-threshold / --readiness-success-threshold for listener and probed checks alike, fail open at once, logs following the damped result; an injected clock.
import t from "tap";
import { evaluate, readyzJson, readyzVerbose } from "../../src/http/readyz-answers.js";
import type { ListenerScan, SocketTable } from "../../src/procfs/listener-scan.js";
import type { ProbeOutcome } from "../../src/readiness/health-probe.js";
import { CheckDamper } from "../../src/readiness/hysteresis.js";
import { ReadinessCheck } from "../../src/readiness/readiness-check.js";
import { LOG_MESSAGES } from "../../src/readiness/transitions.js";
import { captureLog } from "../helpers/log-capture.js";
import { ManualTimers } from "../helpers/test-doubles.js";

const TTL = 1000;
const LIVE = { draining: false };

function seen(ports: number[], unreadable: SocketTable[] = []): ListenerScan {
  return { listeningPorts: new Set(ports), unreadableTables: unreadable.map((table) => ({ table, error: `${table} broke` })) };
}

/** A check with one required port and the upstream probe, both scripted; each `run` is one fresh evaluation. */
function setup(thresholds: { failure: number; success: number }) {
  const { log, records } = captureLog();
  const clock = new ManualTimers(1000);
  const state = { scan: seen([15008]), outcome: { ok: true, status: 200 } as ProbeOutcome };
  const check = new ReadinessCheck({
    requiredPorts: [15008],
    scanner: { scan: async () => state.scan },
    probed: [{ name: "upstream", target: { path: "/healthz" }, probe: { probe: async () => state.outcome, close: async () => {} } }],
    log,
    ttlMs: TTL,
    clock,
    thresholds,
  });
  const run = async () => {
    const report = await check.check();
    clock.time += TTL; // the next call is a fresh evaluation
    return { report, verbose: readyzVerbose(evaluate(report, LIVE)), json: readyzJson(report, evaluate(report, LIVE)) };
  };
  return { state, run, records };
}

t.test("a passing check fails only after n failures in a row, and passes again only after n passes", async (t) => {
  const { state, run, records } = setup({ failure: 3, success: 2 });
  t.match((await run()).verbose, /readyz check passed/);
  state.outcome = { ok: false, reason: "status 500", status: 500 };
  let answer = await run();
  t.equal(answer.verbose, "[+]listener-15008 ok\n[+]upstream ok (1 of 3 failures)\n[+]shutdown ok\nreadyz check passed\n");
  t.equal(answer.json, '{"status":"ready"}');
  answer = await run();
  t.match(answer.verbose, /\[\+\]upstream ok \(2 of 3 failures\)/);
  t.notOk(records.some((record) => record.msg === LOG_MESSAGES.upstreamFailing), "no failing line while the failures are being counted");
  answer = await run();
  t.match(answer.verbose, /\[-\]upstream failed: status 500\n/, "the third failure in a row turns it");
  t.equal(records.filter((record) => record.msg === LOG_MESSAGES.upstreamFailing).length, 1, "one line, at the damped transition");
  state.outcome = { ok: true, status: 200 };
  answer = await run();
  t.match(answer.verbose, /\[-\]upstream failed: status 500 \(1 of 2 successes\)\n/, "one pass is not enough");
  t.match(answer.json, /"failedChecks":\["upstream"\]/);
  answer = await run();
  t.match(answer.verbose, /\[\+\]upstream ok\n[\s\S]*readyz check passed/);
  t.equal(records.filter((record) => record.msg === LOG_MESSAGES.upstreamPassing).length, 2, "the first pass and the damped return");
});

t.test("a blip shorter than the threshold never shows, and a pass in between resets the count", async (t) => {
  const { state, run } = setup({ failure: 2, success: 1 });
  await run();
  for (let round = 0; round < 5; round++) {
    state.scan = seen([]);
    t.match((await run()).verbose, /\[\+\]listener-15008 ok \(1 of 2 failures\)/);
    state.scan = seen([15008]);
    t.match((await run()).verbose, /\[\+\]listener-15008 ok\n/);
  }
  state.scan = seen([]);
  await run();
  const answer = await run();
  t.match(answer.json, /"missingListeners":\[15008\]/, "two in a row: missing, and the body says which");
});

t.test("listener transitions follow the damped verdict", async (t) => {
  const { state, run, records } = setup({ failure: 2, success: 2 });
  state.scan = seen([]);
  await run();
  const stateLines = () => records.filter((record) => String(record.msg).startsWith("required listeners")).map((record) => record.msg);
  t.same(stateLines(), [LOG_MESSAGES.missing], "the first evaluation reports what it found");
  state.scan = seen([15008]);
  await run();
  t.same(stateLines(), [LOG_MESSAGES.missing], "one pass of two: still missing, nothing logged");
  await run();
  t.same(stateLines(), [LOG_MESSAGES.missing, LOG_MESSAGES.present]);
});

t.test("draining and maintenance do not wait: they are read live, outside the damped checks", async (t) => {
  const { run } = setup({ failure: 3, success: 3 });
  const { report } = await run();
  t.equal(readyzJson(report, evaluate(report, { draining: true })), '{"status":"not ready","draining":true,"failedChecks":["shutdown"]}');
  t.match(readyzJson(report, evaluate(report, { draining: false, maintenance: true })), /"failedChecks":\["maintenance"\]/);
});

t.test("fail open applies at once", async (t) => {
  const { state, run } = setup({ failure: 3, success: 3 });
  state.scan = seen([]);
  await run();
  state.scan = seen([], ["tcp"]);
  const answer = await run();
  t.match(answer.verbose, /\[\+\]listener-15008 ok \(not enforced: socket table unreadable\)/, "no 1 of 3 successes: not enforced at once");
});

t.test("thresholds of 1 change nothing", async (t) => {
  const damper = new CheckDamper({ failure: 1, success: 1 });
  t.same([true, false, false, true, false].map((ok) => damper.next(ok)), [{ ok: true }, { ok: false }, { ok: false }, { ok: true }, { ok: false }]);
});
