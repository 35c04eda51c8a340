// Warn lines for proxy-made errors, throttled per kind: the first at once, then one summary per interval with how many were held back.
import type { Logger } from "pino";
import { withoutQuery } from "../access-log/access-log.js";
import { errorCode } from "../errors.js";

/** Schedules `run` after `ms`; returns nothing to cancel: a window always ends. Tests pass a manual one. */
export type Schedule = (run: () => void, ms: number) => void;

const realSchedule: Schedule = (run, ms) => {
  // unref: a pending summary never keeps a stopping process alive.
  setTimeout(run, ms).unref();
};

/** How often, at most, a summary line per kind is written during an outage. */
export const SUMMARY_INTERVAL_MS = 10_000;

/**
 * An outage at thousands of requests per second must not become thousands of warn lines per
 * second (it did: 69,119 lines, 17 MB, in a 10-second outage). Each kind (the fixed message)
 * logs its first occurrence in full; the rest of its window goes to debug with every detail,
 * and when the window ends one warn line says how many were held back (`suppressed: N`). A
 * window in which nothing was held back closes the episode: the next error is logged in full.
 */
export class ProxyErrorLog {
  readonly #log: Logger;
  readonly #schedule: Schedule;
  readonly #intervalMs: number;
  /** Kinds with an open window, and how many lines each has held back in it. */
  readonly #held = new Map<string, number>();

  constructor(log: Logger, { schedule = realSchedule, intervalMs = SUMMARY_INTERVAL_MS }: { schedule?: Schedule; intervalMs?: number } = {}) {
    this.#log = log;
    this.#schedule = schedule;
    this.#intervalMs = intervalMs;
  }

  /** A proxy-made error response (502, 504, 400): the request id the client sees is what the operator searches for. */
  proxyError(request: { readonly method: string; readonly url: string }, requestId: string, status: number, error: Error, reason: string): void {
    this.warn(reason, { requestId, status, method: request.method, url: withoutQuery(request.url), code: errorCode(error), err: error.message });
  }

  /** Any other per-request warning that an outage multiplies. */
  warn(kind: string, fields: Record<string, unknown>): void {
    this.#throttled("warn", kind, fields);
  }

  /** A defect of ours contained to one request (`internal error`): at error level, throttled the same way. */
  error(kind: string, fields: Record<string, unknown>): void {
    this.#throttled("error", kind, fields);
  }

  #throttled(level: "warn" | "error", kind: string, fields: Record<string, unknown>): void {
    const held = this.#held.get(kind);
    if (held === undefined) {
      this.#log[level](fields, kind);
      this.#held.set(kind, 0);
      this.#schedule(() => this.#closeWindow(level, kind), this.#intervalMs);
      return;
    }
    this.#held.set(kind, held + 1);
    this.#log.debug(fields, kind);
  }

  #closeWindow(level: "warn" | "error", kind: string): void {
    const held = this.#held.get(kind) ?? 0;
    if (held === 0) {
      this.#held.delete(kind);
      return;
    }
    this.#log[level]({ suppressed: held, intervalMs: this.#intervalMs }, kind);
    this.#held.set(kind, 0);
    this.#schedule(() => this.#closeWindow(level, kind), this.#intervalMs);
  }
}
