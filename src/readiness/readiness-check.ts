// The readiness check behind /readyz: one socket-table scan and every probed check (named ones, upstream) side by side, cached with one shared run per TTL.
import type { Logger } from "pino";
import type { ListenerKey, RequiredListener } from "../config/listener-specs.js";
import { TCP_TABLES, type ListenerScan, type SocketTable } from "../procfs/listener-scan.js";
import { CachedCheck } from "./cached-check.js";
import { SYSTEM_TIMERS, type Clock } from "../timers.js";
import { MAINTENANCE_CHECK, SHUTDOWN_CHECK, checkNames, listenerResults, type CheckResult, type ReadinessReport } from "./check-results.js";
import { probeSafely, type ProbedCheck } from "./probed-check.js";
import type { ProbeOutcome } from "./health-probe.js";
import { Hysteresis, NO_DAMPING, type Thresholds } from "./hysteresis.js";
import { StillFailingLog } from "./still-failing.js";
import { ProbeTransitionLog, TransitionLog } from "./transitions.js";
import type { UpstreamListener } from "./upstream-listener.js";
import { decideVerdict, type Verdict } from "./verdict.js";

/** Anything that can scan the socket tables (ListenerScanner, or a counted fake in tests). */
export interface Scanner {
  scan(): Promise<ListenerScan>;
  /** The tables a scan reads (a scanner that throws makes them all unreadable); the TCP ones when absent. */
  readonly tables?: readonly SocketTable[];
}

/** Told of each fresh run (metrics implement it); never of cached answers. */
export interface ReadinessObserver {
  onScan(durationSeconds: number, unreadableTables: readonly SocketTable[]): void;
  onReport(report: ReadinessReport): void;
}

export interface ReadinessCheckOptions {
  /** TCP ports, ascending, unique; with `otherListeners` empty too, readiness is not gated on listeners. */
  readonly requiredPorts: readonly number[];
  /** UDP and unix listeners, in check order (after the TCP ports); the scanner reads their tables. */
  readonly otherListeners?: readonly RequiredListener[];
  /** Listeners given a name (`<name>=<spec>`); the others have their default name. */
  readonly listenerNames?: ReadonlyMap<ListenerKey, string>;
  readonly scanner: Scanner;
  readonly log: Logger;
  readonly ttlMs: number;
  readonly clock?: Clock;
  /**
   * Checks answered by an endpoint, in check order: the named ones (--readiness-required-http,
   * --readiness-required-grpc), then `upstream`. Each probe settles within its own timeout.
   */
  readonly probed?: readonly ProbedCheck[];
  /** --readiness-warn-after; undefined: never. */
  readonly warnAfterMs?: number;
  readonly observer?: ReadinessObserver;
  /** Entrypoint form: the upstream's own port counts only at an address the proxy reaches (one of `requiredPorts`). */
  readonly upstreamListener?: UpstreamListener;
  /** Read at each run, so that no line says "reporting ready" while the drain or maintenance mode keeps /readyz at 503. */
  readonly drain?: { readonly draining: boolean; readonly maintenance?: boolean | undefined };
  /** The admin listener's `maintenance` check exists (read live by /readyz, not run here): first among the names. */
  readonly maintenanceCheck?: boolean;
  /** --readiness-failure-threshold and --readiness-success-threshold, for every check kind; default 1 and 1. */
  readonly thresholds?: Thresholds;
}

/** Nothing required: always ready, and no scan or probe is ever made. */
const NOTHING_REQUIRED: ReadinessReport = { verdict: { state: "present", ready: true, ports: [] }, checks: [] };

/** Answers "is every check passing?" at most one scan and one probe per TTL, however many callers. */
export class ReadinessCheck {
  readonly #cache: CachedCheck<ReadinessReport> | undefined;
  readonly #probed: readonly ProbedCheck[];
  /** Every configured check's name, `maintenance` first when there is one, `shutdown` last. */
  readonly names: readonly string[];

  constructor(options: ReadinessCheckOptions) {
    const { requiredPorts, probed = [], otherListeners = [] } = options;
    this.#probed = probed;
    const keys = [...requiredPorts, ...otherListeners.map((listener) => listener.key)];
    this.names = [...(options.maintenanceCheck ? [MAINTENANCE_CHECK] : []), ...checkNames(keys, probed.map((check) => check.name), options.listenerNames)];
    if (keys.length === 0 && probed.length === 0) return;
    const clock = options.clock ?? SYSTEM_TIMERS;
    const run = createRun(options, clock, this.names);
    this.#cache = new CachedCheck({ ttlMs: options.ttlMs, clock, run });
  }

  /** The cached report if fresh, synchronously; undefined means call {@link check}. */
  peek(): ReadinessReport | undefined {
    return this.#cache ? this.#cache.peek() : NOTHING_REQUIRED;
  }

  /** The last report however old, or undefined before the first run settles; never runs (see CachedCheck.latest). */
  latest(): ReadinessReport | undefined {
    return this.#cache ? this.#cache.latest() : NOTHING_REQUIRED;
  }

  /** The current report: cached (at most `maxAgeMs` old when given, else the TTL), shared with a run in flight, or from a new run. */
  check(maxAgeMs?: number): Promise<ReadinessReport> {
    return this.#cache ? this.#cache.get(maxAgeMs) : Promise.resolve(NOTHING_REQUIRED);
  }

  /** At the end of the drain: every probe's own connection closes. */
  async close(): Promise<void> {
    await Promise.all(this.#probed.map((check) => check.probe.close()));
  }
}

/** One run: the scan and every probe at once, so a slow endpoint never delays the scan, another probe, or the reverse. */
function createRun(options: ReadinessCheckOptions, clock: Clock, names: readonly string[]): () => Promise<ReadinessReport> {
  const { requiredPorts, scanner, log, probed = [], observer, upstreamListener, drain, otherListeners = [], listenerNames } = options;
  const anyListener = requiredPorts.length > 0 || otherListeners.length > 0;
  const transitions = new TransitionLog(log);
  const probeTransitions = probed.map((check) => new ProbeTransitionLog(log, check));
  const stillFailing = options.warnAfterMs === undefined ? undefined : new StillFailingLog(log, options.warnAfterMs);
  const scanTables = async (): Promise<ListenerScan> => {
    const started = clock.now();
    const scan = await scanSafely(scanner);
    // The benchmark counts these to prove the cache bounds reads; off (a no-op) below trace.
    log.trace({ unreadableTables: scan.unreadableTables.length }, "socket tables scanned");
    observer?.onScan((clock.now() - started) / 1000, scan.unreadableTables.map((unreadable) => unreadable.table));
    return scan;
  };
  // Rise and fall, once for every check kind: a result is damped before anything (body, logs, metrics) reads it.
  const hysteresis = new Hysteresis(options.thresholds ?? NO_DAMPING);
  const lastReason = new Map<string, string>();
  const lastFailure = new Map<string, ProbeOutcome>();
  const lastPass = new Map<string, ProbeOutcome>();
  const damp = (raw: CheckResult, immediate: boolean): CheckResult => {
    const damped = hysteresis.next(raw.name, raw.ok, immediate);
    if (!raw.ok) lastReason.set(raw.name, raw.reason);
    if (damped.ok === raw.ok) return raw;
    // Until the change has been seen n times, the check reads as it stood, with how far the change has come.
    return damped.ok ? { name: raw.name, ok: true, note: damped.pending } : { name: raw.name, ok: false, reason: `${lastReason.get(raw.name) ?? "failing"} (${damped.pending})` };
  };
  return async () => {
    const [scan, outcomes] = await Promise.all([
      anyListener ? scanTables() : undefined,
      Promise.all(probed.map((check) => probeSafely(check.probe))),
    ]);
    const rawVerdict: Verdict = scan ? decideVerdict(requiredPorts, scan, upstreamListener, otherListeners) : NOTHING_REQUIRED.verdict;
    // Fail open applies at once: a listener passing only because its table is unreadable does not wait.
    const listenerChecks = listenerResults(rawVerdict, listenerNames).map((result) => damp(result, result.ok && result.note !== undefined));
    const verdict = dampedVerdict(rawVerdict, listenerChecks);
    const checks: CheckResult[] = [...listenerChecks];
    // What each probe's transition line sees: the damped state, so a failure still being counted logs nothing.
    const dampedOutcomes = outcomes.map((outcome, index) => {
      const { name } = probed[index]!;
      const result = damp(outcome.ok ? { name, ok: true } : { name, ok: false, reason: outcome.reason }, false);
      checks.push(result);
      (outcome.ok ? lastPass : lastFailure).set(name, outcome);
      if (result.ok === outcome.ok) return outcome;
      return (result.ok ? lastPass : lastFailure).get(name) ?? outcome;
    });
    // The whole verdict as /readyz answers it, so that the lines below never claim ready while it is 503.
    const run = {
      failedChecks: [...(drain?.maintenance ? [MAINTENANCE_CHECK] : []), ...checks.filter((check) => !check.ok).map((check) => check.name), ...(drain?.draining ? [SHUTDOWN_CHECK] : [])],
    };
    const saidReady = scan ? transitions.record(scan, verdict, run) : false;
    dampedOutcomes.forEach((outcome, index) => probeTransitions[index]!.record(outcome));
    transitions.recordVerdict(run, saidReady, names);
    const report: ReadinessReport = { verdict, checks, ...(listenerNames && { listenerNames }) };
    stillFailing?.record(
      checks,
      clock.now(),
      scan && { missing: verdict.state === "missing" ? verdict.missing : [], listening: scan.listeningPorts, unreachable: verdict.state === "missing" ? verdict.unreachable : undefined },
    );
    observer?.onReport(report);
    return report;
  };
}

/** The listener verdict as the damped listener checks have it (the same object when damping changed nothing). */
function dampedVerdict(raw: Verdict, listenerChecks: readonly CheckResult[]): Verdict {
  const rawFailing = new Set(raw.state === "missing" ? raw.missing : []);
  if (raw.ports.every((key, index) => listenerChecks[index]!.ok === !rawFailing.has(key))) return raw;
  const missing = raw.ports.filter((_, index) => !listenerChecks[index]!.ok);
  if (missing.length === 0) return { state: "present", ready: true, ports: raw.ports };
  return { state: "missing", ready: false, ports: raw.ports, missing, ...(raw.state === "missing" && raw.unreachable && { unreachable: raw.unreachable }) };
}

/** A scanner that throws (a bug, not a table problem) fails open like an unreadable table. */
async function scanSafely(scanner: Scanner): Promise<ListenerScan> {
  try {
    return await scanner.scan();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      listeningPorts: new Set(),
      unreadableTables: (scanner.tables ?? TCP_TABLES).map((table) => ({ table, error: `scan failed: ${message}` })),
    };
  }
}
