// The proxied requests in flight, counted by when they began, so a drain can wait for exactly those it found running (CONTRACT §14's /wait-for-drain).

/**
 * Counts requests from their admission to the app to their end. {@link settled} draws a line:
 * it resolves once every request begun before the call has ended, however many begin after it
 * (late requests during an admin drain must not hold the app's stop). The hot path is an
 * increment and a decrement; the line costs a Map entry per era that still has requests.
 */
export class InFlightRequests {
  /** The current era: requests begun since the last line. */
  #era = 0;
  #current = 0;
  /** Older eras with requests still running: era -> count. */
  readonly #older = new Map<number, number>();
  /** Waiters for every era up to and including theirs to empty. */
  #waiters: Array<{ readonly upTo: number; readonly resolve: () => void }> = [];

  /** How many proxied requests are in flight now. */
  get count(): number {
    let total = this.#current;
    for (const count of this.#older.values()) total += count;
    return total;
  }

  /** A request was admitted: returns its era, to hand back to {@link end}. */
  begin(): number {
    this.#current++;
    return this.#era;
  }

  /** The request of `era` has ended. */
  end(era: number): void {
    if (era === this.#era) {
      this.#current--;
      return;
    }
    const left = (this.#older.get(era) ?? 1) - 1;
    if (left > 0) {
      this.#older.set(era, left);
      return;
    }
    this.#older.delete(era);
    this.#wakeSettled();
  }

  /** Resolves once every request in flight now has ended (at once when none is). */
  settled(): Promise<void> {
    const upTo = this.#era;
    if (this.#current > 0) this.#older.set(upTo, this.#current);
    this.#era++;
    this.#current = 0;
    return new Promise((resolve) => {
      this.#waiters.push({ upTo, resolve });
      this.#wakeSettled();
    });
  }

  #wakeSettled(): void {
    if (this.#waiters.length === 0) return;
    let oldest = Infinity;
    for (const era of this.#older.keys()) oldest = Math.min(oldest, era);
    const waiting = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiting) {
      if (waiter.upTo < oldest) waiter.resolve();
      else this.#waiters.push(waiter);
    }
  }
}
