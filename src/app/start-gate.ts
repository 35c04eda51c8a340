// The start gate of the entrypoint form (CONTRACT §14, --app-start-wait): the app starts only once the operator's required ports listen, or when the wait runs out.
import type { Logger } from "pino";
import { formatDuration } from "../config/duration.js";
import { ERROR_CODES, EXIT_CODES, ReadinessProxyError } from "../errors.js";
import type { ReadinessReport } from "../readiness/check-results.js";

/** Time and timers, injected so tests advance them by hand. */
export interface GateClock {
  now(): number;
  setTimeout(run: () => void, ms: number): unknown;
}

const SYSTEM_CLOCK: GateClock = { now: () => Date.now(), setTimeout: (run, ms) => setTimeout(run, ms) };

/**
 * The next look waits the TTL plus this: the cache expires one TTL after its run, and a timer on
 * the event loop's coarser clock can fire a fraction of a millisecond early and find it fresh.
 */
const EXPIRY_SLACK_MS = 2;
/** With a cache TTL of 0 the gate still does not spin: at most this many looks a second. */
const MIN_POLL_MS = 50;

export interface StartGateOptions {
  /** The operator's --readiness-required-listener ports (not the app's own: it cannot listen before it starts). */
  readonly ports: readonly number[];
  /** The one cached check (ReadinessCheck.check): at most one socket-table scan per TTL, shared with /readyz. */
  readonly check: () => Promise<ReadinessReport>;
  readonly ttlMs: number;
  /** --app-start-wait. */
  readonly waitMs: number;
  readonly log: Logger;
  readonly clock?: GateClock;
}

/** The required ports a report found not listening. A table that could not be read fails open, as /readyz does. */
export function missingPorts(report: ReadinessReport, ports: readonly number[]): number[] {
  if (report.verdict.state !== "missing") return [];
  const missing = new Set(report.verdict.missing);
  return ports.filter((port) => missing.has(port));
}

/**
 * Resolves with the ports still missing when the wait ended: empty once every one listens (the
 * app may start), else what the timeout left. Logs `holding the app until required listeners
 * listen` once, when it has to wait at all.
 */
export async function waitForListeners(options: StartGateOptions): Promise<number[]> {
  const { ports, check, ttlMs, waitMs, log, clock = SYSTEM_CLOCK } = options;
  const deadline = clock.now() + waitMs;
  let held = false;
  for (;;) {
    const missing = missingPorts(await check(), ports);
    if (missing.length === 0) return missing;
    if (!held) {
      held = true;
      log.info({ missing }, "holding the app until required listeners listen");
    }
    const left = deadline - clock.now();
    if (left <= 0) return missing;
    await new Promise<void>((resolve) => clock.setTimeout(resolve, Math.min(left, Math.max(ttlMs + EXPIRY_SLACK_MS, MIN_POLL_MS))));
  }
}

/**
 * The gate as the daemon runs it: resolves when the app may start (every port listens, or the
 * wait ran out: then the warn line `required listeners still missing; starting the app`); with
 * `fatal`, a wait that runs out rejects with `required listeners still missing after <d>: <ports>`
 * (exit 1), and the app is never started.
 */
export async function holdAppStart(options: StartGateOptions & { readonly fatal: boolean }): Promise<void> {
  const missing = await waitForListeners(options);
  if (missing.length === 0) return;
  if (options.fatal) {
    throw new ReadinessProxyError(ERROR_CODES.appStartWait, `required listeners still missing after ${formatDuration(options.waitMs)}: ${missing.join(", ")}`, EXIT_CODES.runtime);
  }
  options.log.warn({ missing }, "required listeners still missing; starting the app");
}
