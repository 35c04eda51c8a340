// Logs readiness state changes, per-table read failures and each probed check's state once per transition, never once per check.
import type { Logger } from "pino";
import type { ProbeOutcome, ProbeTarget } from "./probed-check.js";
import { UPSTREAM_CHECK } from "./check-results.js";
import { SOCKET_TABLES, type ListenerScan, type SocketTable } from "../procfs/listener-scan.js";
import type { Verdict } from "./verdict.js";

/** The stable log messages of CONTRACT §4; scripts and alerts match on them. */
export const LOG_MESSAGES = {
  present: "required listeners present; reporting ready",
  missing: "required listeners missing; reporting not ready",
  notEnforced: "required listeners not enforced; reporting ready",
  tableUnreadable: "cannot read TCP socket table",
  tableReadableAgain: "TCP socket table readable again",
  upstreamFailing: "upstream health check failing; reporting not ready",
  upstreamPassing: "upstream health check passing",
  checkFailing: "health check failing; reporting not ready",
  checkPassing: "health check passing",
  stillFailing: "readiness check still failing",
} as const;

/** Remembers the last state and which tables were unreadable, and logs only what changed. */
export class TransitionLog {
  readonly #log: Logger;
  #lastState: Verdict["state"] | undefined;
  readonly #unreadable = new Set<SocketTable>();

  constructor(log: Logger) {
    this.#log = log;
  }

  /** Records the outcome of one fresh scan (cached answers are not recorded again). */
  record(scan: ListenerScan, verdict: Verdict): void {
    this.#recordTables(scan);
    if (verdict.state === this.#lastState) return;
    this.#lastState = verdict.state;
    switch (verdict.state) {
      case "present":
        this.#log.info({ ports: verdict.ports }, LOG_MESSAGES.present);
        break;
      case "missing":
        this.#log.warn({ ports: verdict.ports, missing: verdict.missing }, LOG_MESSAGES.missing);
        break;
      case "not enforced":
        this.#log.warn(
          { ports: verdict.ports, unreadableTables: verdict.unreadableTables },
          LOG_MESSAGES.notEnforced,
        );
        break;
    }
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
 * `upstream` keeps its own messages (CONTRACT §4); a named check's lines say `check` and its target.
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
    this.#lastOk = outcome.ok;
    if (outcome.ok) this.#log.info({ ...this.#fields }, this.#passing);
    else this.#log.warn({ ...this.#fields, ...(outcome.status === undefined ? { err: outcome.err } : { status: outcome.status }) }, this.#failing);
  }
}
