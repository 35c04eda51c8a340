// Turns one listener scan and the required ports into one of the three readiness states.
import type { ListenerScan, SocketTable } from "../procfs/listener-scan.js";

/** The outcome of one readiness check. */
export type Verdict =
  | { readonly state: "present"; readonly ready: true; readonly ports: readonly number[] }
  | {
      readonly state: "missing";
      readonly ready: false;
      readonly ports: readonly number[];
      /** Required ports seen in no table, ascending. */
      readonly missing: readonly number[];
    }
  | {
      /** Fail open: some port was not seen, but a table could not be read, so nothing is reported missing. */
      readonly state: "not enforced";
      readonly ready: true;
      readonly ports: readonly number[];
      readonly unreadableTables: readonly SocketTable[];
    };

/**
 * Decides readiness. `requiredPorts` must be ascending and unique (the CLI guarantees it).
 * `present` needs every port seen; otherwise an unreadable table means `not enforced`
 * (we cannot tell whether it hid the port), and only with every table read is it `missing`.
 */
export function decideVerdict(requiredPorts: readonly number[], scan: ListenerScan): Verdict {
  const missing = requiredPorts.filter((port) => !scan.listeningPorts.has(port));
  if (missing.length === 0) return { state: "present", ready: true, ports: requiredPorts };
  if (scan.unreadableTables.length > 0) {
    return {
      state: "not enforced",
      ready: true,
      ports: requiredPorts,
      unreadableTables: scan.unreadableTables.map((unreadable) => unreadable.table),
    };
  }
  return { state: "missing", ready: false, ports: requiredPorts, missing };
}
