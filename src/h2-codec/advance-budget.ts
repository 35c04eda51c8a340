// The bound, shared by connections, on body octets whose connection credit went back on arrival (before their user took them), so one stalled reader never closes a shared connection's window.

/**
 * A stream's own window already bounds what it makes us hold; giving the connection's credit back
 * as the DATA arrives (Envoy and nghttp2 do the same) keeps the connection open for the other
 * streams whatever one stream's reader does. What that lets every peer together make us hold is
 * bounded here: past the limit, credit goes back only once the octets are taken, as without a budget.
 */
export class AdvanceBudget {
  #left: number;

  constructor(readonly limit: number) {
    this.#left = limit;
  }

  /** Octets that may still be held on credit given in advance. */
  get left(): number {
    return this.#left;
  }

  /** Takes `octets` of the budget; false (and nothing taken) when they do not fit. */
  take(octets: number): boolean {
    if (octets > this.#left) return false;
    this.#left -= octets;
    return true;
  }

  /** Octets held on advanced credit were taken or dropped. */
  give(octets: number): void {
    this.#left += octets;
  }
}
