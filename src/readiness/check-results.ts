// Named check results (CONTRACT §2, §14, §15): `maintenance`, `listener-<port>` per required port, the named HTTP and gRPC checks, `upstream`, `shutdown`, each ok or a short fixed reason.
import { defaultListenerName, type ListenerKey } from "../config/listener-specs.js";
import type { Verdict } from "./verdict.js";

/** One named check's outcome. `reason` is short and fixed: it is shown to unauthenticated callers. */
export type CheckResult =
  | { readonly name: string; readonly ok: true; /** Set when the check passed only because it could not be enforced. */ readonly note?: string }
  | { readonly name: string; readonly ok: false; readonly reason: string };

/** What one cached run of the checks found (the shutdown check is not here: it is read live). */
export interface ReadinessReport {
  /** The listener verdict (for `missingListeners` and the transition log). */
  readonly verdict: Verdict;
  /** Every check but `shutdown`, in the contract's order: listeners ascending, the named checks, then upstream. */
  readonly checks: readonly CheckResult[];
  /** The listeners given a name (`<name>=<spec>`); the others have their default name. */
  readonly listenerNames?: ReadonlyMap<ListenerKey, string>;
}

export const SHUTDOWN_CHECK = "shutdown";
/** The operator's switch of the admin listener (CONTRACT §14): first in check order when --admin-listen is on; read live. */
export const MAINTENANCE_CHECK = "maintenance";
export const UPSTREAM_CHECK = "upstream";

/** `listener-15008`, `listener-udp-53`, `listener-unix-fpm-sock`, or the name it was given. */
export function listenerCheckName(key: ListenerKey, names?: ReadonlyMap<ListenerKey, string>): string {
  return names?.get(key) ?? defaultListenerName(key);
}

/** One result per required port, from one verdict: all the listener checks share one scan. */
export function listenerResults(verdict: Verdict, names?: ReadonlyMap<ListenerKey, string>): CheckResult[] {
  switch (verdict.state) {
    case "present":
      return verdict.ports.map((port) => ({ name: listenerCheckName(port, names), ok: true }));
    case "missing": {
      const missing = new Set(verdict.missing);
      return verdict.ports.map((port) =>
        missing.has(port) ? { name: listenerCheckName(port, names), ok: false, reason: "not listening" } : { name: listenerCheckName(port, names), ok: true },
      );
    }
    case "not enforced":
      // Fail open: which ports a table hid cannot be told, so none is reported missing.
      return verdict.ports.map((port) => ({ name: listenerCheckName(port, names), ok: true, note: "not enforced: socket table unreadable" }));
  }
}

/**
 * The names of every configured check, in order, `shutdown` last: what `/readyz/<name>` and
 * `?exclude` accept. `probedNames` are the probed checks in their order (the named ones, then
 * `upstream`).
 */
export function checkNames(requiredListeners: readonly ListenerKey[], probedNames: readonly string[], names?: ReadonlyMap<ListenerKey, string>): string[] {
  return [...requiredListeners.map((key) => listenerCheckName(key, names)), ...probedNames, SHUTDOWN_CHECK];
}
