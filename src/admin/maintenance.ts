// Maintenance mode (CONTRACT §14): the operator's switch that fails the `maintenance` check, with an optional expiry; logged once per change.
import type { Logger } from "pino";

/** Time and timers, injected so tests advance them by hand. */
export interface MaintenanceClock {
  now(): number;
  setTimeout(run: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const SYSTEM_CLOCK: MaintenanceClock = {
  now: () => Date.now(),
  // Unref'd: an expiry never keeps the process alive on its own.
  setTimeout: (run, ms) => setTimeout(run, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** The longest `--for`: 24 days, under a timer's 2^31 ms limit (longer, node fires it at once). Longer than that is "until off". */
export const MAX_MAINTENANCE_MS = 576 * 3_600_000;

/** A `for` duration as given (`30m`), or why not: above 0 and at most {@link MAX_MAINTENANCE_MS}. */
export function maintenanceDurationProblem(ms: number | undefined): string | undefined {
  if (ms === undefined || ms <= 0 || ms > MAX_MAINTENANCE_MS) return "expected a duration above 0 and at most 576h, like 30s or 10m";
  return undefined;
}

export interface MaintenanceOptions {
  readonly log: Logger;
  readonly clock?: MaintenanceClock;
  /** Told of every change (gRPC Watch streams hear it at once, not at their next poll). */
  readonly onChange?: () => void;
}

/** On or off; `until` is when an `on` with a duration ends by itself. */
export class MaintenanceMode {
  readonly #log: Logger;
  readonly #clock: MaintenanceClock;
  readonly #onChange: () => void;
  #on = false;
  #until: number | undefined;
  #timer: unknown;

  constructor(options: MaintenanceOptions) {
    this.#log = options.log;
    this.#clock = options.clock ?? SYSTEM_CLOCK;
    this.#onChange = options.onChange ?? (() => {});
  }

  /** Whether the `maintenance` check fails now. */
  get on(): boolean {
    return this.#on;
  }

  /** When it ends by itself, as an ISO time; null when it lasts until turned off (or is off). */
  get until(): string | null {
    return this.#on && this.#until !== undefined ? new Date(this.#until).toISOString() : null;
  }

  /** Turns it on, for `forMs` or until turned off; again: the new expiry replaces the old one (logged again). */
  turnOn(forMs?: number): void {
    this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    const until = forMs === undefined ? undefined : this.#clock.now() + forMs;
    const changed = !this.#on || until !== this.#until;
    this.#on = true;
    this.#until = until;
    if (forMs !== undefined) this.#timer = this.#clock.setTimeout(() => this.#turnOff("expired"), forMs);
    if (!changed) return;
    this.#log.warn({ until: this.until }, "maintenance on");
    this.#onChange();
  }

  /** Turns it off (`DELETE /maintenance`); a no-op when it is off. */
  turnOff(): void {
    this.#turnOff("deleted");
  }

  /** Stops the expiry timer (the process is stopping). */
  close(): void {
    this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #turnOff(reason: "deleted" | "expired"): void {
    this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    if (!this.#on) return;
    this.#on = false;
    this.#until = undefined;
    this.#log.info({ reason }, "maintenance off");
    this.#onChange();
  }
}
