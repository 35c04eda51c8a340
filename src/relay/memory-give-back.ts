// When a burst of connections ends, or the relay goes quiet after a busy spell, one memory-reducing collection: V8 gives back the pages the work's garbage filled, which a quiet relay otherwise keeps at their peak for good.
import { exposeGc, type CollectGarbage } from "../http/stream-garbage.js";

/**
 * How far the relay's load (client connections and queued requests) must fall below its high
 * point before a collection is asked for. A waiting connection costs about 3-4 KB of V8 heap
 * (bench section 6), so this many gone leave some 4 MB to give back: worth one collection
 * (tens of milliseconds, once per burst), where the churn of a steady load never gets there.
 */
export const COLLECT_AFTER_DROP = 1_000;

/**
 * How many requests a busy spell must have begun (since the last collection) before its end is
 * collected. About 700 bytes a request outlive V8's young generation under h2load -c10 -m10 and
 * wait in the old one, whose pages V8 then keeps: after 7 s of it (some 240,000 requests on 10
 * connections, never a burst by the rule above) RssAnon stayed 43-58 MB above idle for good;
 * with this collection it was back to 18-20 MB above idle a second later. This many requests
 * leave several MB to give back for one collection (two memory-reducing mark-compacts, 36 ms in
 * all after that load, on the main thread), so even traffic that comes in spells of exactly
 * this size spends little on it.
 */
export const COLLECT_AFTER_REQUESTS = 10_000;

/**
 * At most this many requests begun since the last sweep (a second) is a quiet relay: the busy
 * spell is over, and a pause of tens of milliseconds meets at most these few.
 */
export const QUIET_REQUESTS = 10;

/** What one sweep tells the give-back. */
export interface RelayActivity {
  /** Client connections and queued requests now. */
  readonly load: number;
  /** Proxied requests begun since the process started (InFlightRequests.begun). */
  readonly begun: number;
}

/**
 * V8 collects when it allocates, so a relay that goes quiet never collects the garbage of the
 * work just done; and a plain full collection (node --expose-gc's gc()) frees the objects but
 * keeps their pages for reuse: after 5,000 queued clients left, RssAnon stayed at 78 MB of which
 * V8's anonymous pages were 40 MB, before and after gc() alike. The "last resort" collection
 * (V8's CollectAllAvailableGarbage, memory-reducing, as on a memory-pressure notification) also
 * gives the pages back: 40 -> 15 MB, about where they were before the burst.
 *
 * Two ends of work are collected, each once: a burst of connections that has gone (the load
 * fell COLLECT_AFTER_DROP below its high point, even while the rest are still served), and a
 * busy spell over (a quiet sweep after COLLECT_AFTER_REQUESTS requests since the last collection),
 * whatever the protocol or the number of connections.
 */
export class MemoryGiveBack {
  readonly #obtain: () => CollectGarbage | undefined;
  #highWater = 0;
  /** Requests begun as of the last sweep; -1 before the first one. */
  #begunBefore = -1;
  /** Requests begun as of the last collection. */
  #begunAtCollection = 0;
  /** null until the first collection is due; then gc(), or undefined when there is none. */
  #collect: CollectGarbage | undefined | null = null;
  #collections = 0;

  /** `obtain` is called once, when the first collection is due; undefined turns collections off. */
  constructor(obtain: () => CollectGarbage | undefined = exposeGc) {
    this.#obtain = obtain;
  }

  /** Collections asked for so far. */
  get collections(): number {
    return this.#collections;
  }

  /** One sweep's view of the relay: a burst's end or a busy spell's end is collected, once each. */
  observe(activity: RelayActivity): void {
    const quiet = this.#begunBefore >= 0 && activity.begun - this.#begunBefore <= QUIET_REQUESTS;
    this.#begunBefore = activity.begun;
    const busySpellEnded = quiet && activity.begun - this.#begunAtCollection >= COLLECT_AFTER_REQUESTS;
    if (!this.#burstEnded(activity.load) && !busySpellEnded) return;
    this.#begunAtCollection = activity.begun;
    this.#collectNow();
  }

  /** A new high point is remembered; a fall of COLLECT_AFTER_DROP below it ends a burst, and the high point starts again from here. */
  #burstEnded(load: number): boolean {
    if (load > this.#highWater) {
      this.#highWater = load;
      return false;
    }
    if (this.#highWater - load < COLLECT_AFTER_DROP) return false;
    this.#highWater = load;
    return true;
  }

  #collectNow(): void {
    if (this.#collect === null) this.#collect = this.#obtain();
    if (this.#collect === undefined) return;
    this.#collections++;
    this.#collect({ type: "major", flavor: "last-resort" });
  }
}
