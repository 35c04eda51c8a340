// Logs readiness state changes, per-table read failures and the upstream check's state once per transition, never once per check.
import type { Logger } from "pino";
import type { ProbeOutcome } from "./upstream-probe.js";
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

/** What the upstream check's lines name: `path` for the HTTP check, `service` for the gRPC one (§13). */
export type UpstreamTarget = { readonly path: string } | { readonly service: string };

/** The upstream check's two states, each logged once when entered (the first probe included). */
export class UpstreamTransitionLog {
  readonly #log: Logger;
  readonly #target: UpstreamTarget;
  #lastOk: boolean | undefined;

  constructor(log: Logger, target: UpstreamTarget) {
    this.#log = log;
    this.#target = target;
  }

  record(outcome: ProbeOutcome): void {
    if (outcome.ok === this.#lastOk) return;
    this.#lastOk = outcome.ok;
    if (outcome.ok) this.#log.info({ ...this.#target }, LOG_MESSAGES.upstreamPassing);
    else this.#log.warn({ ...this.#target, ...(outcome.status === undefined ? { err: outcome.err } : { status: outcome.status }) }, LOG_MESSAGES.upstreamFailing);
  }
}
