// GET /status of the admin listener (CONTRACT §14): what the operator asks first, from the one cached check and the live states.
import type { DrainState } from "../http/drain-state.js";
import { evaluate } from "../http/readyz-answers.js";
import type { ReadinessReport } from "../readiness/check-results.js";

/** The answer's body. Unlike /readyz it is for the operator only (loopback), so reasons are given for every check. */
export interface AdminStatus {
  readonly ready: boolean;
  readonly draining: boolean;
  readonly maintenance: boolean;
  /** When maintenance ends by itself (ISO time); null when it is off or lasts until turned off. */
  readonly maintenanceUntil: string | null;
  /** Every check in check order, as `/readyz?verbose` shows them. */
  readonly checks: ReadonlyArray<{ readonly name: string; readonly ok: boolean; readonly reason?: string; readonly note?: string }>;
  /** Proxied requests between their admission to the app and their end. */
  readonly requestsInFlight: number;
}

/** The status for one report and the live states. */
export function describeStatus(report: ReadinessReport, state: DrainState, maintenanceUntil: string | null, requestsInFlight: number): AdminStatus {
  const evaluation = evaluate(report, state);
  return {
    ready: evaluation.ready,
    draining: state.draining,
    maintenance: state.maintenance === true,
    maintenanceUntil,
    checks: evaluation.results.map((result) => ({ ...result })),
    requestsInFlight,
  };
}
