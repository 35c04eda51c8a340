// Names a check that has failed for --readiness-warn-after in one warn line per failing episode, with what a wrong port looks like.
import type { Logger } from "pino";
import type { ListenerKey } from "../config/listener-specs.js";
import type { CheckResult } from "./check-results.js";
import { LOG_MESSAGES } from "./transitions.js";

/** At most this many listening ports are named: enough to spot a typo, bounded for the log. */
const MAX_LISTENING_PORTS = 32;

/** What a listener check's warn line adds: the required ports not listening, and those that are. */
export interface ListenerContext {
  readonly missing: readonly ListenerKey[];
  readonly listening: ReadonlySet<number>;
  /** Where the upstream's port listens out of the proxy's reach (`[::1]:8000`): the operator sees the wrong bind at once. */
  readonly unreachable?: readonly string[] | undefined;
}

/**
 * Tracks since when each check has failed, fed once per fresh run. An operator reading
 * `kubectl logs` of a replica that stays not ready sees which check, for how long, and for a
 * listener which ports do listen: an app bound to 8081 instead of 8080 is obvious at once.
 */
export class StillFailingLog {
  readonly #log: Logger;
  readonly #warnAfterMs: number;
  readonly #failingSince = new Map<string, number>();
  readonly #warned = new Set<string>();

  constructor(log: Logger, warnAfterMs: number) {
    this.#log = log;
    this.#warnAfterMs = warnAfterMs;
  }

  record(checks: readonly CheckResult[], now: number, listeners: ListenerContext | undefined): void {
    for (const check of checks) {
      if (check.ok) {
        this.#failingSince.delete(check.name);
        this.#warned.delete(check.name);
        continue;
      }
      const since = this.#failingSince.get(check.name) ?? now;
      this.#failingSince.set(check.name, since);
      const failingForMs = Math.round(now - since);
      if (this.#warned.has(check.name) || failingForMs < this.#warnAfterMs) continue;
      this.#warned.add(check.name);
      const detail = listeners && check.name.startsWith("listener-") ? listenerDetail(listeners, check.name.slice("listener-".length)) : {};
      this.#log.warn({ check: check.name, failingForMs, reason: check.reason, ...detail }, LOG_MESSAGES.stillFailing);
    }
  }
}

/** The listener fields of the warn line; `unreachable` only for the port it names (the upstream's). */
function listenerDetail(listeners: ListenerContext, port: string): Record<string, unknown> {
  const unreachable = listeners.unreachable?.filter((socket) => socket.endsWith(`:${port}`)) ?? [];
  return {
    missing: listeners.missing,
    listening: [...listeners.listening].sort((a, b) => a - b).slice(0, MAX_LISTENING_PORTS),
    ...(unreachable.length > 0 && { unreachable }),
  };
}
