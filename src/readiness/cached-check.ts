// Serves one check result to every caller for a TTL, with one shared in-flight run (single-flight).

import { NO_READING, SYSTEM_TIMERS, type Clock } from "../timers.js";

export interface CachedCheckOptions<T> {
  /** The expensive work; called at most once per TTL however many callers there are. */
  readonly run: () => Promise<T>;
  readonly ttlMs: number;
  readonly clock?: Clock;
}

/**
 * Caches the result of `run` for `ttlMs` after it settles. Callers that arrive while a run is
 * in flight await that same run. A run that rejects (or throws) is shared by its waiters but
 * not cached, and the in-flight slot is cleared in `finally`, so the next caller runs again
 * instead of waiting forever on a dead promise.
 */
export class CachedCheck<T> {
  readonly #run: () => Promise<T>;
  readonly #ttlMs: number;
  readonly #clock: Clock;
  #value: T | undefined;
  #hasValue = false;
  #expiresAt = NO_READING;
  /** When the cached value's run settled: what a caller asking for a fresher one compares. */
  #settledAt = NO_READING;
  #inFlight: Promise<T> | undefined;

  constructor(options: CachedCheckOptions<T>) {
    this.#run = options.run;
    this.#ttlMs = options.ttlMs;
    this.#clock = options.clock ?? SYSTEM_TIMERS;
  }

  /** The cached result if still fresh, without allocating a promise (the /readyz fast path). */
  peek(): T | undefined {
    return this.#hasValue && this.#clock.now() < this.#expiresAt ? this.#value : undefined;
  }

  /**
   * The last run's result however old, without running: for a caller that watches the answers others
   * asked for and must never start a run (a run it started would be shared, stale, by the next caller).
   */
  latest(): T | undefined {
    return this.#hasValue ? this.#value : undefined;
  }

  /**
   * A fresh result: the cached one, the one in flight, or a new run. `maxAgeMs` asks for one
   * fresher than the TTL (the held `/readyz?wait` callers: every 50 ms); a run in flight is shared
   * either way.
   */
  get(maxAgeMs?: number): Promise<T> {
    const cached = this.peek();
    if (cached !== undefined && (maxAgeMs === undefined || this.#clock.now() < this.#settledAt + maxAgeMs)) return Promise.resolve(cached);
    this.#inFlight ??= this.#startRun();
    return this.#inFlight;
  }

  #startRun(): Promise<T> {
    // Starting from a resolved promise turns a synchronous throw in `run` into a rejection
    // that settles after `#inFlight` is assigned, so `finally` always sees its own run.
    const flight: Promise<T> = Promise.resolve()
      .then(() => this.#run())
      .then((value) => {
        this.#value = value;
        this.#hasValue = true;
        this.#settledAt = this.#clock.now();
        this.#expiresAt = this.#settledAt + this.#ttlMs;
        return value;
      })
      .finally(() => {
        if (this.#inFlight === flight) this.#inFlight = undefined;
      });
    return flight;
  }
}
