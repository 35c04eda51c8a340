// `/readyz?wait=<duration>`: requests held while the answer would be a plain 503, answered the moment the checks pass; one shared re-run every 50 ms while anyone waits.
import type { ReadinessReport } from "../readiness/check-results.js";

/** The longest a caller may ask to be held (a kubelet probe's timeout is seconds). */
export const MAX_WAIT_MS = 30_000;
/** While anyone waits, the checks are re-run at most this often: one run serves every waiter. */
export const WAIT_RECHECK_MS = 50;

/** What the held requests read: the shared cached check, asked for a result at most `maxAgeMs` old. */
export interface SharedCheck {
  check(maxAgeMs?: number): Promise<ReadinessReport>;
}

interface Waiter {
  /** Whether this request is still to be held after `report` (not ready, and not draining or in maintenance). */
  readonly stillHeld: (report: ReadinessReport) => boolean;
  readonly answer: (report: ReadinessReport) => void;
  timer: NodeJS.Timeout | undefined;
}

/**
 * Holds `/readyz?wait` requests. Not a loop per request: one timer, while the set is not empty,
 * asks the shared cached check for a result at most {@link WAIT_RECHECK_MS} old, so a thousand
 * waiters cost one run per 50 ms and the ordinary callers read the same runs.
 */
export class HeldReadyz {
  readonly #check: SharedCheck;
  readonly #recheckMs: number;
  readonly #waiters = new Set<Waiter>();
  #latest: ReadinessReport | undefined;
  #recheck: NodeJS.Timeout | undefined;
  #running = false;

  constructor(check: SharedCheck, recheckMs = WAIT_RECHECK_MS) {
    this.#check = check;
    this.#recheckMs = recheckMs;
  }

  /** How many requests are held now (tests, metrics). */
  get size(): number {
    return this.#waiters.size;
  }

  /** Holds a request whose answer now is `report`, for at most `waitMs`; `answer` is called once, with the report to answer from. */
  hold(report: ReadinessReport, waitMs: number, stillHeld: (report: ReadinessReport) => boolean, answer: (report: ReadinessReport) => void): void {
    this.#latest = report;
    const waiter: Waiter = { stillHeld, answer, timer: undefined };
    // The duration ends: the 503 of the latest run.
    waiter.timer = setTimeout(() => this.#release(waiter, this.#latest ?? report), waitMs);
    this.#waiters.add(waiter);
    this.#schedule();
  }

  #release(waiter: Waiter, report: ReadinessReport): void {
    if (!this.#waiters.delete(waiter)) return;
    clearTimeout(waiter.timer);
    try {
      waiter.answer(report);
    } catch {
      // A client gone while held: nothing to answer, and a timer's throw must never end the process.
    }
    if (this.#waiters.size === 0 && this.#recheck) {
      clearTimeout(this.#recheck);
      this.#recheck = undefined;
    }
  }

  #schedule(): void {
    if (this.#recheck || this.#running || this.#waiters.size === 0) return;
    this.#recheck = setTimeout(() => {
      this.#recheck = undefined;
      void this.#run();
    }, this.#recheckMs);
  }

  async #run(): Promise<void> {
    this.#running = true;
    try {
      const report = await this.#check.check(this.#recheckMs);
      this.#latest = report;
      for (const waiter of [...this.#waiters]) if (!waiter.stillHeld(report)) this.#release(waiter, report);
    } catch {
      // ReadinessCheck turns every failure into a report; a rejection is a bug, and the waiters' own timers still answer them.
    } finally {
      this.#running = false;
      this.#schedule();
    }
  }
}
