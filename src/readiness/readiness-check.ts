// The readiness check behind /readyz: one socket-table scan and the upstream probe side by side, cached with one shared run per TTL.
import type { Logger } from "pino";
import { SOCKET_TABLES, type ListenerScan, type SocketTable } from "../procfs/listener-scan.js";
import { CachedCheck, systemClock, type Clock } from "./cached-check.js";
import { MAINTENANCE_CHECK, SHUTDOWN_CHECK, UPSTREAM_CHECK, checkNames, listenerResults, type CheckResult, type ReadinessReport } from "./check-results.js";
import { StillFailingLog } from "./still-failing.js";
import { TransitionLog, UpstreamTransitionLog } from "./transitions.js";
import type { UpstreamListener } from "./upstream-listener.js";
import type { ProbeOutcome } from "./upstream-probe.js";
import { decideVerdict, type Verdict } from "./verdict.js";

/** Anything that can scan the socket tables (ListenerScanner, or a counted fake in tests). */
export interface Scanner {
  scan(): Promise<ListenerScan>;
}

/** The app's own health: an HTTP path (UpstreamProbe) or a gRPC service (GrpcUpstreamProbe), or a fake in tests. */
export interface UpstreamHealth {
  /** Exactly one of the two is set: what the transition lines name (`path`, or `service` for gRPC). */
  readonly path?: string;
  readonly service?: string;
  probe(): Promise<ProbeOutcome>;
}

/** Told of each fresh run (metrics implement it); never of cached answers. */
export interface ReadinessObserver {
  onScan(durationSeconds: number, unreadableTables: readonly SocketTable[]): void;
  onReport(report: ReadinessReport): void;
}

export interface ReadinessCheckOptions {
  /** Ascending, unique; empty means readiness is not gated on listeners. */
  readonly requiredPorts: readonly number[];
  readonly scanner: Scanner;
  readonly log: Logger;
  readonly ttlMs: number;
  readonly clock?: Clock;
  /** Also require the app's health path (--readiness-upstream-path). */
  readonly upstream?: UpstreamHealth;
  /** --readiness-warn-after; undefined: never. */
  readonly warnAfterMs?: number;
  readonly observer?: ReadinessObserver;
  /** Entrypoint form: the upstream's own port counts only at an address the proxy reaches (one of `requiredPorts`). */
  readonly upstreamListener?: UpstreamListener;
  /** Read at each run, so that no line says "reporting ready" while the drain or maintenance mode keeps /readyz at 503. */
  readonly drain?: { readonly draining: boolean; readonly maintenance?: boolean | undefined };
  /** The admin listener's `maintenance` check exists (read live by /readyz, not run here): first among the names. */
  readonly maintenanceCheck?: boolean;
}

/** Nothing required: always ready, and no scan or probe is ever made. */
const NOTHING_REQUIRED: ReadinessReport = { verdict: { state: "present", ready: true, ports: [] }, checks: [] };

/** Answers "is every check passing?" at most one scan and one probe per TTL, however many callers. */
export class ReadinessCheck {
  readonly #cache: CachedCheck<ReadinessReport> | undefined;
  /** Every configured check's name, `maintenance` first when there is one, `shutdown` last. */
  readonly names: readonly string[];

  constructor(options: ReadinessCheckOptions) {
    const { requiredPorts, upstream } = options;
    this.names = [...(options.maintenanceCheck ? [MAINTENANCE_CHECK] : []), ...checkNames(requiredPorts, upstream !== undefined)];
    if (requiredPorts.length === 0 && upstream === undefined) return;
    const clock = options.clock ?? systemClock;
    const run = createRun(options, clock, this.names);
    this.#cache = new CachedCheck({ ttlMs: options.ttlMs, clock, run });
  }

  /** The cached report if fresh, synchronously; undefined means call {@link check}. */
  peek(): ReadinessReport | undefined {
    return this.#cache ? this.#cache.peek() : NOTHING_REQUIRED;
  }

  /** The current report: cached, shared with a run in flight, or from a new run. */
  check(): Promise<ReadinessReport> {
    return this.#cache ? this.#cache.get() : Promise.resolve(NOTHING_REQUIRED);
  }
}

/** One run: the scan and the probe at once, so a slow app never delays the scan or the reverse. */
function createRun(options: ReadinessCheckOptions, clock: Clock, names: readonly string[]): () => Promise<ReadinessReport> {
  const { requiredPorts, scanner, log, upstream, observer, upstreamListener, drain } = options;
  const transitions = new TransitionLog(log);
  const upstreamTransitions = upstream ? new UpstreamTransitionLog(log, upstream.service === undefined ? { path: upstream.path ?? "" } : { service: upstream.service }) : undefined;
  const stillFailing = options.warnAfterMs === undefined ? undefined : new StillFailingLog(log, options.warnAfterMs);
  const scanTables = async (): Promise<ListenerScan> => {
    const started = clock.now();
    const scan = await scanSafely(scanner);
    // The benchmark counts these to prove the cache bounds reads; off (a no-op) below trace.
    log.trace({ unreadableTables: scan.unreadableTables.length }, "socket tables scanned");
    observer?.onScan((clock.now() - started) / 1000, scan.unreadableTables.map((unreadable) => unreadable.table));
    return scan;
  };
  return async () => {
    const [scan, outcome] = await Promise.all([requiredPorts.length > 0 ? scanTables() : undefined, upstream ? probeSafely(upstream) : undefined]);
    const verdict: Verdict = scan ? decideVerdict(requiredPorts, scan, upstreamListener) : NOTHING_REQUIRED.verdict;
    const checks: CheckResult[] = listenerResults(verdict);
    if (outcome) checks.push(outcome.ok ? { name: UPSTREAM_CHECK, ok: true } : { name: UPSTREAM_CHECK, ok: false, reason: outcome.reason });
    // The whole verdict as /readyz answers it, so that the lines below never claim ready while it is 503.
    const run = {
      failedChecks: [...(drain?.maintenance ? [MAINTENANCE_CHECK] : []), ...checks.filter((check) => !check.ok).map((check) => check.name), ...(drain?.draining ? [SHUTDOWN_CHECK] : [])],
    };
    const saidReady = scan ? transitions.record(scan, verdict, run) : false;
    if (outcome) upstreamTransitions!.record(outcome);
    transitions.recordVerdict(run, saidReady, names);
    const report: ReadinessReport = { verdict, checks };
    stillFailing?.record(
      checks,
      clock.now(),
      scan && { missing: verdict.state === "missing" ? verdict.missing : [], listening: scan.listeningPorts, unreachable: verdict.state === "missing" ? verdict.unreachable : undefined },
    );
    observer?.onReport(report);
    return report;
  };
}

/** A scanner that throws (a bug, not a table problem) fails open like an unreadable table. */
async function scanSafely(scanner: Scanner): Promise<ListenerScan> {
  try {
    return await scanner.scan();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      listeningPorts: new Set(),
      unreadableTables: SOCKET_TABLES.map((table) => ({ table, error: `scan failed: ${message}` })),
    };
  }
}

/** A probe that throws is a failing probe: the app is not known to be ready (no fail-open here). */
async function probeSafely(upstream: UpstreamHealth): Promise<ProbeOutcome> {
  try {
    return await upstream.probe();
  } catch (error) {
    return { ok: false, reason: "connection failed", err: error instanceof Error ? error.message : String(error) };
  }
}
