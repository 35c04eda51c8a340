// The open streams of one connection keyed by stream id, in flat arrays that allocate only when the table grows: a Map churned per stream allocates its rehashed tables in V8's old space.

/** Slots at the first set; doubled whenever the table would be more than half full, never shrunk. */
const INITIAL_CAPACITY = 16;

/**
 * Every map's one slot before its first set, shared and never written (a set always grows first):
 * a connection that has had no stream, or the listener's idle ones made before it, holds no table.
 */
const NO_IDS = new Int32Array(1);
const NO_VALUES: undefined[] = [undefined];

/**
 * A map from stream id (1 to 2^31-1) to a value, by open addressing with linear probing and
 * backward-shift deletion (no tombstones, so a long-lived connection's table never degrades).
 *
 * Why not a Map: a connection lives long, so V8 keeps its Map in the old generation, and a Map
 * there that grows or shrinks (open streams come and go around a small count) allocates each
 * new hash table in the old generation too (V8's OrderedHashTable rehash keeps the table's
 * generation). Each was garbage that waited for a full collection: on the gRPC bench about 180
 * bytes a call, a quarter of all that outlived the young generation
 * (bench/grpc-profile.mjs --heap, BENCH_HEAP_SURVIVORS=1). Here a set or delete allocates
 * nothing once the table has reached the connection's high-water mark.
 *
 * The slot is the id's rank among ids of its parity (id >>> 1): ids of one side rise one by one,
 * so open streams sit in consecutive slots and rarely collide. A peer choosing ids to collide
 * gets chains no longer than the streams it may have open (our SETTINGS_MAX_CONCURRENT_STREAMS).
 */
export class StreamIdMap<V> {
  /** 0: an empty slot (0 is never a stream's id). */
  #ids = NO_IDS;
  #values: (V | undefined)[] = NO_VALUES;
  #mask = 0;
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** Slots now: grows with the high-water mark of open streams, never with churn. */
  get capacity(): number {
    return this.#ids.length;
  }

  /** Empty: gives its table back (a connection gone idle); the next set grows a new one. */
  release(): void {
    if (this.#size > 0) return;
    this.#ids = NO_IDS;
    this.#values = NO_VALUES;
    this.#mask = 0;
  }

  get(id: number): V | undefined {
    const slot = this.#find(id);
    return slot < 0 ? undefined : this.#values[slot];
  }

  set(id: number, value: V): void {
    const existing = this.#find(id);
    if (existing >= 0) {
      this.#values[existing] = value;
      return;
    }
    if ((this.#size + 1) * 2 > this.#ids.length) this.#grow();
    this.#place(id, value);
    this.#size++;
  }

  /** True if the id was there. */
  delete(id: number): boolean {
    let hole = this.#find(id);
    if (hole < 0) return false;
    const ids = this.#ids;
    const values = this.#values;
    const mask = this.#mask;
    this.#size--;
    // Backward shift: each entry after the hole, up to the next empty slot, moves into the hole
    // unless its home slot lies cyclically after the hole (it would then be found no more).
    for (let next = (hole + 1) & mask; ids[next] !== 0; next = (next + 1) & mask) {
      const home = (ids[next]! >>> 1) & mask;
      const stays = hole <= next ? hole < home && home <= next : hole < home || home <= next;
      if (stays) continue;
      ids[hole] = ids[next]!;
      values[hole] = values[next];
      hole = next;
    }
    ids[hole] = 0;
    values[hole] = undefined;
    return true;
  }

  /** The values in ascending id order (a stream's id order is the order it opened): a copy, so callers may delete while they walk it. */
  values(): V[] {
    const open: { id: number; value: V }[] = [];
    for (let slot = 0; slot < this.#ids.length; slot++) {
      if (this.#ids[slot] !== 0) open.push({ id: this.#ids[slot]!, value: this.#values[slot] as V });
    }
    return open.sort((a, b) => a.id - b.id).map((entry) => entry.value);
  }

  /**
   * The values as they lie in the table, no order and no copy: for a walk that changes no entry
   * (a SETTINGS frame's window re-base), so a frame costs one iterator, not an array of every
   * open stream. Use {@link values} to set or delete while walking.
   */
  *[Symbol.iterator](): Iterator<V> {
    const ids = this.#ids;
    const values = this.#values;
    for (let slot = 0; slot < ids.length; slot++) if (ids[slot] !== 0) yield values[slot] as V;
  }

  /** The slot holding `id`, or -1. */
  #find(id: number): number {
    const ids = this.#ids;
    const mask = this.#mask;
    for (let slot = (id >>> 1) & mask; ids[slot] !== 0; slot = (slot + 1) & mask) {
      if (ids[slot] === id) return slot;
    }
    return -1;
  }

  /** Into the first empty slot from the id's home; the caller has made room. */
  #place(id: number, value: V): void {
    let slot = (id >>> 1) & this.#mask;
    while (this.#ids[slot] !== 0) slot = (slot + 1) & this.#mask;
    this.#ids[slot] = id;
    this.#values[slot] = value;
  }

  #grow(): void {
    const ids = this.#ids;
    const values = this.#values;
    const capacity = Math.max(INITIAL_CAPACITY, ids.length * 2);
    this.#ids = new Int32Array(capacity);
    this.#values = new Array<V | undefined>(capacity).fill(undefined);
    this.#mask = capacity - 1;
    for (let slot = 0; slot < ids.length; slot++) {
      if (ids[slot] !== 0) this.#place(ids[slot]!, values[slot] as V);
    }
  }
}
