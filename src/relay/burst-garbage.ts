// After a burst of connections ends, and for every thousand more while one arrives, one memory-reducing collection: V8 gives back the pages the burst's garbage filled, which a quiet relay otherwise keeps at its peak for good.
import { exposeGc, type CollectGarbage } from "./stream-garbage.js";

/**
 * How far the relay's load (client connections and queued requests) must fall below its high
 * point before a collection is asked for. A waiting connection costs about 3-4 KB of V8 heap
 * (bench section 6), so this many gone leave some 4 MB to give back: worth one collection
 * (tens of milliseconds, once per burst), where the churn of a steady load never gets there.
 */
export const COLLECT_AFTER_DROP = 1_000;

/**
 * V8 collects when it allocates, so a relay that goes quiet after a burst never collects the
 * burst's garbage; and a plain full collection (node --expose-gc's gc()) frees the objects but
 * keeps their pages for reuse: after 5,000 queued clients left, RssAnon stayed at 78 MB of which
 * V8's anonymous pages were 40 MB, before and after gc() alike. The "last resort" collection
 * (V8's CollectAllAvailableGarbage, memory-reducing, as on a memory-pressure notification) also
 * gives the pages back: 40 -> 15 MB, about where they were before the burst.
 */
export class BurstGarbage {
  readonly #obtain: () => CollectGarbage | undefined;
  readonly #drop: number;
  #highWater = 0;
  /** The lowest load since the last collection: a rise of `drop` above it is collected too. */
  #lowWater = 0;
  /** null until the first collection is due; then gc(), or undefined when there is none. */
  #collect: CollectGarbage | undefined | null = null;
  #collections = 0;

  /** `obtain` is called once, when the first collection is due; undefined turns collections off. */
  constructor(obtain: () => CollectGarbage | undefined = exposeGc, drop = COLLECT_AFTER_DROP) {
    this.#obtain = obtain;
    this.#drop = drop;
  }

  /** Collections asked for so far. */
  get collections(): number {
    return this.#collections;
  }

  /**
   * The load now (the sweep's, once a second): a fall of `drop` below the high point since the
   * last collection is a burst that ended, and a rise of `drop` above the low point one that is
   * arriving; each is collected once, and both points start again from here.
   *
   * The rise: 10,000 clients that each sent a GET and went quiet left their exchanges' objects
   * promoted to V8's old space, which V8 collects only once that space has grown by its own
   * factor: RssAnon 51.9 MB held with them, 42.2 after one collection, and in a 64 MiB cgroup
   * (with 17 MiB of the kernel's socket memory) the ramp was OOM-killed at ~9,800. With a
   * collection per 1,000 arriving: 10,000 held at 42.1 MB, peak 62.6 MiB (bench/soak-cgroup.mjs
   * --loads idle). A steady load's churn moves less than `drop` and is never collected.
   */
  observe(load: number): void {
    if (load > this.#highWater) this.#highWater = load;
    if (load < this.#lowWater) this.#lowWater = load;
    if (this.#highWater - load < this.#drop && load - this.#lowWater < this.#drop) return;
    this.#highWater = load;
    this.#lowWater = load;
    if (this.#collect === null) this.#collect = this.#obtain();
    if (this.#collect === undefined) return;
    this.#collections++;
    this.#collect({ type: "major", flavor: "last-resort" });
  }
}
