// Readiness check tests: transition logging once per change, fail-open, counted scans through the cache.
import { join } from "node:path";
import t from "tap";
import { ListenerScanner, type ListenerScan, type SocketTable } from "../../src/procfs/listener-scan.js";
import { ReadinessCheck, type Scanner } from "../../src/readiness/readiness-check.js";
import { LOG_MESSAGES } from "../../src/readiness/transitions.js";
import { captureLog } from "../helpers/log-capture.js";
import { ManualClock } from "../helpers/test-doubles.js";

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
    const clock = new ManualClock();
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
  const clock = new ManualClock();
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
  t.match(records[0], { ports: [443, 15008], missing: [15008], level: 40 });
  t.match(records[1], { ports: [443, 15008], level: 30 });
  t.match(records[3], { table: "tcp6", err: "tcp6 broke" });
  t.match(records[4], { ports: [443, 15008], unreadableTables: ["tcp6"] });
  t.match(records[7], { err: /scan failed: scanner bug/ });
  t.equal(scanner.calls, steps.length);
});

t.test("the cache bounds scans however many callers", async (t) => {
  const { log } = captureLog();
  const clock = new ManualClock();
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
