// Readiness check tests: transition logging once per change, fail-open, counted scans through the cache.
import { join } from "node:path";
import t from "tap";
import { ListenerScanner, type ListenerScan, type SocketTable } from "../../src/procfs/listener-scan.js";
import { ReadinessCheck, type Scanner } from "../../src/readiness/readiness-check.js";
import { LOG_MESSAGES } from "../../src/readiness/transitions.js";
import { captureLog } from "../helpers/log-capture.js";
import { ManualTimers } from "../helpers/test-doubles.js";

const fixtures = join(import.meta.dirname, "../../proc-fixtures");

/** A scanner that replays scripted scans and counts calls. */
class ScriptedScanner implements Scanner {
  calls = 0;
  next: ListenerScan | Error = seen([]);
  async scan(): Promise<ListenerScan> {
    this.calls++;
    if (this.next instanceof Error) throw this.next;
    return this.next;
  }
}

function seen(ports: number[], unreadable: SocketTable[] = []): ListenerScan {
  return {
    listeningPorts: new Set(ports),
    unreadableTables: unreadable.map((table) => ({ table, error: `${table} broke` })),
  };
}

t.test("each fixture logs exactly one state line, and the right one", async (t) => {
  const cases: Array<[string, string, string[]]> = [
    ["listen-tcp-only", LOG_MESSAGES.present, []],
    ["listen-tcp6-only", LOG_MESSAGES.present, []],
    ["established-only", LOG_MESSAGES.missing, []],
    ["time-wait", LOG_MESSAGES.missing, []],
    ["other-port-listening", LOG_MESSAGES.missing, []],
    ["tcp6-missing", LOG_MESSAGES.present, []],
    ["malformed-header", LOG_MESSAGES.notEnforced, ["tcp"]],
    ["malformed-row", LOG_MESSAGES.notEnforced, ["tcp"]],
    ["unreadable", LOG_MESSAGES.notEnforced, ["tcp"]],
    ["empty-file", LOG_MESSAGES.present, ["tcp"]],
    ["found-while-other-unreadable", LOG_MESSAGES.present, ["tcp6"]],
    ["missing-while-other-unreadable", LOG_MESSAGES.notEnforced, ["tcp6"]],
  ];
  for (const [fixture, stateLine, warnedTables] of cases) {
    const { log, records } = captureLog();
    const clock = new ManualTimers(1000);
    const check = new ReadinessCheck({
      requiredPorts: [15008],
      scanner: new ListenerScanner({ procRoot: join(fixtures, fixture) }),
      log,
      ttlMs: 1000,
      clock,
    });
    for (let round = 0; round < 3; round++) {
      await check.check();
      clock.time += 1000; // every round a fresh scan
    }
    const stateLines = records.filter((record) => record.msg.startsWith("required listeners"));
    t.same(stateLines.map((record) => record.msg), [stateLine], `${fixture}: one state line over three scans`);
    const warnings = records.filter((record) => record.msg === LOG_MESSAGES.tableUnreadable);
    t.same(warnings.map((record) => record.table), warnedTables, `${fixture}: table warnings once`);
    for (const warning of warnings) t.equal(warning.level, 40, "warn level");
  }
});

t.test("a sequence logs one line per transition", async (t) => {
  const { log, records } = captureLog();
  const clock = new ManualTimers(1000);
  const scanner = new ScriptedScanner();
  const check = new ReadinessCheck({ requiredPorts: [443, 15008], scanner, log, ttlMs: 1000, clock });
  const steps: Array<[ListenerScan | Error, string, boolean]> = [
    [seen([443]), "missing", false],
    [seen([443]), "missing", false],
    [seen([443, 15008]), "present", true],
    [seen([443, 15008]), "present", true],
    [seen([]), "missing", false],
    [seen([443], ["tcp6"]), "not enforced", true],
    [seen([443], ["tcp6"]), "not enforced", true],
    [seen([443, 15008], ["tcp6"]), "present", true],
    [seen([443, 15008]), "present", true],
    [new Error("scanner bug"), "not enforced", true],
    [seen([]), "missing", false],
  ];
  for (const [next, state, ready] of steps) {
    scanner.next = next;
    const { verdict } = await check.check();
    t.equal(verdict.state, state);
    t.equal(verdict.ready, ready);
    clock.time += 1000;
  }
  t.same(
    records.map((record) => [record.msg, record.table ?? null]),
    [
      [LOG_MESSAGES.missing, null],
      [LOG_MESSAGES.present, null],
      [LOG_MESSAGES.missing, null],
      [LOG_MESSAGES.tableUnreadable, "tcp6"],
      [LOG_MESSAGES.notEnforced, null],
      [LOG_MESSAGES.present, null],
      [LOG_MESSAGES.tableReadableAgain, "tcp6"],
      [LOG_MESSAGES.tableUnreadable, "tcp"],
      [LOG_MESSAGES.tableUnreadable, "tcp6"],
      [LOG_MESSAGES.notEnforced, null],
      [LOG_MESSAGES.tableReadableAgain, "tcp"],
      [LOG_MESSAGES.tableReadableAgain, "tcp6"],
      [LOG_MESSAGES.missing, null],
    ],
  );
  // Missing at start is how every pod starts (info); missing after present is a listener gone (warn).
  t.match(records[0], { ports: [443, 15008], missing: [15008], level: 30 });
  t.match(records[1], { ports: [443, 15008], level: 30 });
  t.match(records[2], { ports: [443, 15008], missing: [443, 15008], level: 40 });
  t.match(records[3], { table: "tcp6", err: "tcp6 broke" });
  t.match(records[4], { ports: [443, 15008], unreadableTables: ["tcp6"] });
  t.match(records[7], { err: /scan failed: scanner bug/ });
  t.equal(scanner.calls, steps.length);
});

t.test("no line says reporting ready while another check or the drain keeps /readyz at 503", async (t) => {
  const { log, records } = captureLog();
  const clock = new ManualTimers(1000);
  const scanner = new ScriptedScanner();
  const drain = { draining: false };
  let appOk = false;
  const upstream = {
    name: "upstream",
    target: { path: "/ready" },
    probe: { probe: async () => (appOk ? { ok: true as const, status: 200 } : { ok: false as const, reason: "status 503", status: 503 }), close: async () => {} },
  };
  const check = new ReadinessCheck({ requiredPorts: [8000], scanner, log, ttlMs: 1000, clock, probed: [upstream], drain });
  // [listening, app ok, draining, the lines this run adds]
  const steps: Array<[number[], boolean, boolean, string[]]> = [
    [[], false, false, [LOG_MESSAGES.missing, LOG_MESSAGES.upstreamFailing]],
    [[8000], false, false, [LOG_MESSAGES.presentOthersFailing]],
    [[8000], true, false, [LOG_MESSAGES.upstreamPassing, LOG_MESSAGES.allPassing]],
    [[8000], false, false, [LOG_MESSAGES.upstreamFailing]],
    [[], true, false, [LOG_MESSAGES.missing, LOG_MESSAGES.upstreamPassing]],
    [[8000], true, false, [LOG_MESSAGES.present]],
    [[8000], true, true, []],
    [[], true, true, [LOG_MESSAGES.missing]],
    [[8000], true, true, [LOG_MESSAGES.presentOthersFailing]],
  ];
  for (const [ports, ok, draining, lines] of steps) {
    const before = records.length;
    scanner.next = seen(ports);
    appOk = ok;
    drain.draining = draining;
    await check.check();
    clock.time += 1000;
    const added = records.slice(before);
    t.same(added.map((record) => record.msg), lines, `listening ${JSON.stringify(ports)}, app ${ok ? "ok" : "failing"}${draining ? ", draining" : ""}`);
    const answers200 = ports.length === 1 && ok && !draining;
    if (!answers200) t.notOk(added.some((record) => record.msg.includes("reporting ready")), "no reporting ready line while /readyz is 503");
  }
  t.match(records.find((record) => record.msg === LOG_MESSAGES.presentOthersFailing), { ports: [8000], failedChecks: ["upstream"], level: 30 });
  t.match(records.findLast((record) => record.msg === LOG_MESSAGES.presentOthersFailing), { failedChecks: ["shutdown"] });
  t.match(records.find((record) => record.msg === LOG_MESSAGES.allPassing), { checks: ["listener-8000", "upstream", "shutdown"], level: 30 });
  const failing = records.filter((record) => record.msg === LOG_MESSAGES.upstreamFailing);
  t.match(failing, [
    { level: 30, path: "/ready", reason: "status 503", status: 503 },
    { level: 40, path: "/ready", reason: "status 503", status: 503 },
  ], "failing at start is info, failing after passing a warning; the reason as ?verbose says it");
});

t.test("the upstream's own port counts only where the proxy reaches it, and the lines name where it does listen", async (t) => {
  const { log, records } = captureLog();
  const clock = new ManualTimers(1000);
  const scanner = new ScriptedScanner();
  const check = new ReadinessCheck({ requiredPorts: [8000, 15008], scanner, log, ttlMs: 1000, clock, warnAfterMs: 2000, upstreamListener: { port: 8000, hosts: ["127.0.0.1"] } });
  const at = (sockets: Array<[number, string]>): ListenerScan => ({
    listeningPorts: new Set(sockets.map(([port]) => port)),
    listenAddresses: new Map(sockets.map(([port, address]) => [port, [address]])),
    unreadableTables: [],
  });
  const steps: Array<[ListenerScan, string, string[]]> = [
    [at([[15008, "::"]]), "missing", ["listener-8000"]],
    [at([[15008, "::"], [8000, "::1"]]), "missing", ["listener-8000"]],
    [at([[15008, "::"], [8000, "::1"]]), "missing", ["listener-8000"]],
    [at([[15008, "::"], [8000, "127.0.0.1"]]), "present", []],
  ];
  for (const [scan, state, failed] of steps) {
    scanner.next = scan;
    const report = await check.check();
    t.equal(report.verdict.state, state);
    t.same(report.checks.filter((result) => !result.ok).map((result) => [result.name, "reason" in result && result.reason]), failed.map((name) => [name, "not listening"]), "the public reason stays not listening");
    clock.time += 1000;
  }
  const lines = records.filter((record) => record.msg === LOG_MESSAGES.missing || record.msg === LOG_MESSAGES.stillFailing || record.msg === LOG_MESSAGES.present);
  t.match(lines, [
    { msg: LOG_MESSAGES.missing, level: 30, missing: [8000] },
    { msg: LOG_MESSAGES.missing, level: 40, missing: [8000], unreachable: ["[::1]:8000"] },
    { msg: LOG_MESSAGES.stillFailing, level: 40, check: "listener-8000", missing: [8000], listening: [8000, 15008], unreachable: ["[::1]:8000"] },
    { msg: LOG_MESSAGES.present },
  ]);
  t.notOk("unreachable" in lines[0]!, "not listening at all: nothing to name");
});

t.test("the cache bounds scans however many callers", async (t) => {
  const { log } = captureLog();
  const clock = new ManualTimers(1000);
  const scanner = new ScriptedScanner();
  scanner.next = seen([15008]);
  const check = new ReadinessCheck({ requiredPorts: [15008], scanner, log, ttlMs: 1000, clock });
  t.equal(check.peek(), undefined, "nothing cached before the first scan");
  await Promise.all(Array.from({ length: 32 }, () => check.check()));
  t.equal(scanner.calls, 1, "32 concurrent callers, one scan");
  clock.time += 500;
  t.equal(check.peek()?.verdict.state, "present", "cached within the TTL");
  await check.check();
  t.equal(scanner.calls, 1);
  clock.time += 500;
  scanner.next = seen([]);
  t.equal((await check.check()).verdict.state, "missing", "after the TTL a new scan sees the change");
  t.equal(scanner.calls, 2);
});

t.test("no required ports: always ready, never a scan, nothing logged", async (t) => {
  const { log, records } = captureLog();
  const scanner = new ScriptedScanner();
  const check = new ReadinessCheck({ requiredPorts: [], scanner, log, ttlMs: 1000 });
  t.same((await check.check()).checks, [], "no check but shutdown");
  t.same(check.peek()?.checks, []);
  t.same(check.names, ["shutdown"]);
  t.equal(scanner.calls, 0);
  t.same(records, []);
});
