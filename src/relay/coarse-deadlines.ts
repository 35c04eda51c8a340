// Deadlines of one length on the listener's coarse clock, kept in the order they were started, so the once-a-second sweep looks at those due and stops at the first that is not: its cost follows what is due, not the connections open.

/**
 * A Map used as a list ordered by deadline: every member waits the same `delayMs` and the clock
 * only moves forward, so the order members were started in is the order they fall due. Only
 * members with something timed are in it (a head under way, a parser or buffers to give back
 * once quiet, our end written and the client's close awaited): an idle connection is not.
 */
export class CoarseDeadlines<T> {
  readonly #since = new Map<T, number>();
  readonly #delayMs: number;

  constructor(delayMs: number) {
    if (!(delayMs > 0)) throw new RangeError("a deadline's delay must be positive");
    this.#delayMs = delayMs;
  }

  get size(): number {
    return this.#since.size;
  }

  has(member: T): boolean {
    return this.#since.has(member);
  }

  /** `member`'s time starts at `now` (the newest; a second call starts it again). */
  start(member: T, now: number): void {
    this.#since.delete(member);
    this.#since.set(member, now);
  }

  forget(member: T): void {
    this.#since.delete(member);
  }

  /**
   * At `now`, the members started `delayMs` or more before are taken out, oldest first, and
   * `due` is called for each; when it returns true the member is started again at `now` (looked
   * at once more a delay later). Stops at the first member not due: one started again here is
   * not, as `delayMs` is positive. Returns how many were looked at.
   */
  takeDue(now: number, due: (member: T) => boolean): number {
    let looked = 0;
    for (const [member, since] of this.#since) {
      if (now - since < this.#delayMs) break;
      this.#since.delete(member);
      looked++;
      if (due(member)) this.#since.set(member, now);
    }
    return looked;
  }
}
