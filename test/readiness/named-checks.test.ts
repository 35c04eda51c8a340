// The named checks over fakes: one scan and one probe per run, both side by side; failures never wedge it; the still-failing line once per episode.
import t from "tap";
import type { ListenerScan } from "../../src/procfs/listener-scan.js";
import { ReadinessCheck, type ReadinessObserver, type Scanner } from "../../src/readiness/readiness-check.js";
import { LOG_MESSAGES } from "../../src/readiness/transitions.js";
import type { HealthProbe, ProbeOutcome } from "../../src/readiness/health-probe.js";
import type { ProbedCheck } from "../../src/readiness/probed-check.js";
import { captureLog } from "../helpers/log-capture.js";
import { ManualTimers, deferred } from "../helpers/test-doubles.js";

class CountedScanner implements Scanner {
  calls = 0;
  listening = new Set<number>();
  async scan(): Promise<ListenerScan> {
    this.calls++;
    return { listeningPorts: this.listening, unreadableTables: [] };
  }
}

class ScriptedProbe implements HealthProbe {
  calls = 0;
  next: ProbeOutcome | Error | Promise<ProbeOutcome> = { ok: true, status: 200 };
  probe(): Promise<ProbeOutcome> {
    this.calls++;
    const next = this.next;
    if (next instanceof Error) throw next;
    return Promise.resolve(next);
  }
  async close(): Promise<void> {}
}

function setUp(options: { ports?: number[]; upstream?: boolean; named?: string[]; warnAfterMs?: number; observer?: ReadinessObserver } = {}) {
  const logs = captureLog();
  const clock = new ManualTimers(1000);
  const scanner = new CountedScanner();
  const upstream = new ScriptedProbe();
  const named = new Map((options.named ?? []).map((name) => [name, new ScriptedProbe()]));
  const probed: ProbedCheck[] = [...named].map(([name, probe]) => ({ name, target: { url: `http://127.0.0.1:15021/${name}` }, probe }));
  if (options.upstream !== false) probed.push({ name: "upstream", target: { path: "/ready" }, probe: upstream });
  const check = new ReadinessCheck({
    requiredPorts: options.ports ?? [15008],
    scanner,
    log: logs.log,
    ttlMs: 1000,
    clock,
    probed,
    warnAfterMs: options.warnAfterMs,
    observer: options.observer,
  });
  return { logs, clock, scanner, upstream, named, check };
}

t.test("names in the contract's order", async (t) => {
  t.same(setUp({ ports: [8000, 15008] }).check.names, ["listener-8000", "listener-15008", "upstream", "shutdown"]);
  t.same(setUp({ ports: [], upstream: false }).check.names, ["shutdown"]);
  t.same(setUp({ ports: [15008], named: ["istio", "sql"] }).check.names, ["listener-15008", "istio", "sql", "upstream", "shutdown"]);
});

t.test("1,000 callers: one scan and one run of every probed check per TTL, results in check order", async (t) => {
  const { check, scanner, upstream, named, clock } = setUp({ named: ["istio", "sql"] });
  const hung = deferred<ProbeOutcome>();
  named.get("sql")!.next = hung.promise;
  named.get("istio")!.next = { ok: false, reason: "status 503", status: 503 };
  for (let ttl = 0; ttl < 3; ttl++) {
    const reports = await Promise.all(
      Array.from({ length: 1000 }, (_, index) => {
        if (index === 500 && ttl === 0) hung.resolve({ ok: true, status: 200 });
        return check.check();
      }),
    );
    t.ok(reports.every((report) => report === reports[0]), "one report shared");
    t.same(reports[0]!.checks.map((result) => result.name), ["listener-15008", "istio", "sql", "upstream"]);
    t.equal(reports[0]!.checks[1]!.ok, false);
    t.same([scanner.calls, named.get("istio")!.calls, named.get("sql")!.calls, upstream.calls], [ttl + 1, ttl + 1, ttl + 1, ttl + 1], `one run in TTL ${ttl}`);
    clock.time += 1000;
  }
});

t.test("a named check's transitions are logged once each, with its name and target", async (t) => {
  const { check, named, clock, logs } = setUp({ ports: [], upstream: false, named: ["istio"] });
  for (const outcome of [
    { ok: false, reason: "connection refused", err: "ECONNREFUSED" },
    { ok: false, reason: "status 503", status: 503 },
    { ok: true, status: 200 },
    { ok: true, status: 200 },
  ] satisfies ProbeOutcome[]) {
    named.get("istio")!.next = outcome;
    await check.check();
    clock.time += 1000;
  }
  t.same(
    logs.records.filter((record) => record.msg.startsWith("health check")).map((record) => [record.msg, record.check, record.url, record.err]),
    [
      [LOG_MESSAGES.checkFailing, "istio", "http://127.0.0.1:15021/istio", "ECONNREFUSED"],
      [LOG_MESSAGES.checkPassing, "istio", "http://127.0.0.1:15021/istio", undefined],
    ],
  );
});

t.test("one scan and one probe per TTL however many callers, started side by side", async (t) => {
  const { check, scanner, upstream, clock } = setUp();
  const slowProbe = deferred<ProbeOutcome>();
  upstream.next = slowProbe.promise;
  const callers = Array.from({ length: 256 }, () => check.check());
  // The scan does not wait for the probe: both are under way before either finished.
  await Promise.resolve();
  await Promise.resolve();
  t.equal(scanner.calls, 1);
  t.equal(upstream.calls, 1);
  slowProbe.resolve({ ok: false, reason: "status 503", status: 503 });
  const reports = await Promise.all(callers);
  t.ok(reports.every((report) => report === reports[0]), "every caller shares one report");
  t.same(reports[0]!.checks, [
    { name: "listener-15008", ok: false, reason: "not listening" },
    { name: "upstream", ok: false, reason: "status 503" },
  ]);
  clock.time += 999;
  await check.check();
  t.equal(upstream.calls, 1, "cached within the TTL");
  clock.time += 1;
  scanner.listening.add(15008);
  upstream.next = { ok: true, status: 204 };
  t.same((await check.check()).checks, [
    { name: "listener-15008", ok: true },
    { name: "upstream", ok: true },
  ]);
  t.equal(scanner.calls, 2);
  t.equal(upstream.calls, 2);
});

t.test("a probe that throws is a failing check, and the next run runs again (never wedged)", async (t) => {
  const { check, upstream, clock } = setUp({ ports: [] });
  upstream.next = new Error("boom");
  t.same((await check.check()).checks, [{ name: "upstream", ok: false, reason: "connection failed" }]);
  clock.time += 1000;
  upstream.next = { ok: true, status: 200 };
  t.same((await check.check()).checks, [{ name: "upstream", ok: true }]);
});

t.test("upstream transitions are logged once each", async (t) => {
  const { check, upstream, clock, logs } = setUp({ ports: [] });
  const outcomes: ProbeOutcome[] = [
    { ok: true, status: 200 },
    { ok: true, status: 200 },
    { ok: false, reason: "status 500", status: 500 },
    { ok: false, reason: "connection refused", err: "ECONNREFUSED: connect ECONNREFUSED" },
    { ok: true, status: 200 },
  ];
  for (const outcome of outcomes) {
    upstream.next = outcome;
    await check.check();
    clock.time += 1000;
  }
  t.same(
    logs.records.filter((record) => record.msg.startsWith("upstream health check")).map((record) => [record.msg, record.path, record.status]),
    [
      [LOG_MESSAGES.upstreamPassing, "/ready", undefined],
      [LOG_MESSAGES.upstreamFailing, "/ready", 500],
      [LOG_MESSAGES.upstreamPassing, "/ready", undefined],
    ],
  );
});

t.test("a check failing for --readiness-warn-after is named once per episode, with the ports that do listen", async (t) => {
  const { check, scanner, upstream, clock, logs } = setUp({ ports: [8080], warnAfterMs: 60_000 });
  scanner.listening = new Set([8081, 15008, ...Array.from({ length: 40 }, (_, index) => 20_000 + index)]);
  upstream.next = { ok: false, reason: "status 500", status: 500 };
  const stillFailing = () => logs.records.filter((record) => record.msg === LOG_MESSAGES.stillFailing);
  for (let second = 0; second <= 120; second += 10) {
    await check.check();
    clock.time += 10_000;
  }
  t.equal(stillFailing().length, 2, "one line per failing check, not one per run");
  const listener = stillFailing().find((record) => record.check === "listener-8080")!;
  t.equal(listener.failingForMs, 60_000);
  t.same(listener.missing, [8080]);
  t.same(listener.listening, [8081, 15008, ...Array.from({ length: 30 }, (_, index) => 20_000 + index)], "ascending, at most 32");
  t.match(stillFailing().find((record) => record.check === "upstream"), { failingForMs: 60_000, reason: "status 500" });
  t.equal(listener.level, 40);
  // Recovery ends the episode; a new failure starts a new one.
  scanner.listening = new Set([8080]);
  await check.check();
  clock.time += 1000;
  scanner.listening = new Set();
  for (let second = 0; second <= 61; second += 1) {
    await check.check();
    clock.time += 1000;
  }
  t.equal(stillFailing().filter((record) => record.check === "listener-8080").length, 2, "a second episode, a second line");
});

t.test("the observer hears each fresh run, never a cached answer", async (t) => {
  const seen: string[] = [];
  const { check, clock } = setUp({
    observer: { onScan: (_seconds, unreadable) => seen.push(`scan ${unreadable.length}`), onReport: (report) => seen.push(`report ${report.checks.length}`) },
  });
  await check.check();
  await check.check();
  clock.time += 1000;
  await check.check();
  t.same(seen, ["scan 0", "report 2", "scan 0", "report 2"]);
});
