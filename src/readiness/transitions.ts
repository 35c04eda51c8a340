// Logs readiness state changes, per-table read failures and each probed check's state once per transition, never once per check; no line claims ready while another check fails.
import type { Logger } from "pino";
import type { ProbeOutcome } from "./health-probe.js";
import type { ProbeTarget } from "./probed-check.js";
import { UPSTREAM_CHECK } from "./check-results.js";
import { SOCKET_TABLES, type ListenerScan, type SocketTable } from "../procfs/listener-scan.js";
import type { Verdict } from "./verdict.js";

/** The stable log messages of CONTRACT §4; scripts and alerts match on them. */
export const LOG_MESSAGES = {
  present: "required listeners present; reporting ready",
  missing: "required listeners missing; reporting not ready",
  notEnforced: "required listeners not enforced; reporting ready",
  // The listener lines when another check (upstream, shutdown) keeps /readyz at 503: true, and never "reporting ready".
  presentOthersFailing: "required listeners present; other checks failing",
  notEnforcedOthersFailing: "required listeners not enforced; other checks failing",
  // The whole verdict turned ready through another check than the listeners: the line that says so.
  allPassing: "readiness checks passing; reporting ready",
  tableUnreadable: "cannot read TCP socket table",
  tableReadableAgain: "TCP socket table readable again",
  upstreamFailing: "upstream health check failing; reporting not ready",
  upstreamPassing: "upstream health check passing",
  checkFailing: "health check failing; reporting not ready",
  checkPassing: "health check passing",
  stillFailing: "readiness check still failing",
} as const;

/** What one run decided, beyond the listeners: the names of every failing check (listeners, upstream, shutdown). */
export interface RunOutcome {
  readonly failedChecks: readonly string[];
}

/**
 * Remembers the last listener state, which tables were unreadable and whether the whole verdict
 * was ready, and logs only what changed. The contract's listener lines say "reporting ready"
 * only when /readyz does answer 200; while another check fails the same transition reads
 * "other checks failing". The first state of a start that is `missing` is info: the app or the
 * mesh binding its port after the proxy is how every pod starts, not a warning (one that stays
 * missing gets `readiness check still failing` after --readiness-warn-after).
 */
export class TransitionLog {
  readonly #log: Logger;
  /** The state, with `unreachable` when the upstream's port listens out of reach: a new mistake is a new transition. */
  #lastState: string | undefined;
  #lastReady: boolean | undefined;
  readonly #unreadable = new Set<SocketTable>();

  constructor(log: Logger) {
    this.#log = log;
  }

  /** Records the outcome of one fresh scan (cached answers are not recorded again); returns whether it logged "reporting ready". */
  record(scan: ListenerScan, verdict: Verdict, outcome: RunOutcome): boolean {
    this.#recordTables(scan);
    const state = verdict.state === "missing" && verdict.unreachable ? "missing, unreachable" : verdict.state;
    if (state === this.#lastState) return false;
    const starting = this.#lastState === undefined;
    this.#lastState = state;
    const ready = outcome.failedChecks.length === 0;
    switch (verdict.state) {
      case "present":
        if (ready) this.#log.info({ ports: verdict.ports }, LOG_MESSAGES.present);
        else this.#log.info({ ports: verdict.ports, failedChecks: outcome.failedChecks }, LOG_MESSAGES.presentOthersFailing);
        return ready;
      case "missing": {
        const fields = { ports: verdict.ports, missing: verdict.missing, ...(verdict.unreachable && { unreachable: verdict.unreachable }) };
        if (starting && !verdict.unreachable) this.#log.info(fields, LOG_MESSAGES.missing);
        else this.#log.warn(fields, LOG_MESSAGES.missing);
        return false;
      }
      case "not enforced":
        if (ready) this.#log.warn({ ports: verdict.ports, unreadableTables: verdict.unreadableTables }, LOG_MESSAGES.notEnforced);
        else this.#log.warn({ ports: verdict.ports, unreadableTables: verdict.unreadableTables, failedChecks: outcome.failedChecks }, LOG_MESSAGES.notEnforcedOthersFailing);
        return ready;
    }
  }

  /**
   * After every line of a run: when the whole verdict turned ready and no line of this run said
   * so (the upstream check passing after the listeners), one line does. Turning not ready needs
   * no line of its own: the failing check's line (or `draining`) says it.
   */
  recordVerdict(outcome: RunOutcome, saidReady: boolean, checkNames: readonly string[]): void {
    const ready = outcome.failedChecks.length === 0;
    if (ready === this.#lastReady) return;
    this.#lastReady = ready;
    if (ready && !saidReady) this.#log.info({ checks: checkNames }, LOG_MESSAGES.allPassing);
  }

  #recordTables(scan: ListenerScan): void {
    for (const table of SOCKET_TABLES) {
      const failure = scan.unreadableTables.find((unreadable) => unreadable.table === table);
      if (failure && !this.#unreadable.has(table)) {
        this.#unreadable.add(table);
        this.#log.warn({ table, err: failure.error }, LOG_MESSAGES.tableUnreadable);
      } else if (!failure && this.#unreadable.delete(table)) {
        this.#log.info({ table }, LOG_MESSAGES.tableReadableAgain);
      }
    }
  }
}

/**
 * A probed check's two states, each logged once when entered (the first probe included).
 * `upstream` keeps its own messages (CONTRACT §4); a named check's lines say `check` and its
 * target. The failing line carries the same `reason` as `?verbose` and `/readyz/<name>` (`status
 * 503`, `status NOT_SERVING`, `grpc status 12`), and `status` or `err` for detail. Failing at
 * start (the app not answering yet) is info like a listener missing at start; failing after it
 * passed is a warning.
 */
export class ProbeTransitionLog {
  readonly #log: Logger;
  readonly #fields: Readonly<Record<string, string>>;
  readonly #failing: string;
  readonly #passing: string;
  #lastOk: boolean | undefined;

  constructor(log: Logger, check: { readonly name: string; readonly target: ProbeTarget }) {
    this.#log = log;
    const isUpstream = check.name === UPSTREAM_CHECK;
    this.#fields = isUpstream ? check.target : { check: check.name, ...check.target };
    this.#failing = isUpstream ? LOG_MESSAGES.upstreamFailing : LOG_MESSAGES.checkFailing;
    this.#passing = isUpstream ? LOG_MESSAGES.upstreamPassing : LOG_MESSAGES.checkPassing;
  }

  record(outcome: ProbeOutcome): void {
    if (outcome.ok === this.#lastOk) return;
    const starting = this.#lastOk === undefined;
    this.#lastOk = outcome.ok;
    if (outcome.ok) {
      this.#log.info({ ...this.#fields }, this.#passing);
      return;
    }
    const fields = { ...this.#fields, reason: outcome.reason, ...(outcome.status === undefined ? {} : { status: outcome.status }), ...(outcome.err === undefined ? {} : { err: outcome.err }) };
    if (starting) this.#log.info(fields, this.#failing);
    else this.#log.warn(fields, this.#failing);
  }
}
