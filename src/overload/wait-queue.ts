// A first-in first-out queue whose entries carry their own links: push, shift and the removal of any entry are O(1), with no array to shift or search.

/** The links an entry of a {@link WaitQueue} carries; only the queue writes them. */
export interface QueueLinks<T> {
  previous: T | undefined;
  next: T | undefined;
}

/**
 * An intrusive doubly linked list. An array would make `shift()` O(n) (V8 moves the elements
 * once an array outgrows its fast path) and a removal from the middle (a client that left) O(n)
 * plus a search; here the entry is its own list node, so no allocation happens per operation
 * either. An entry belongs to at most one queue at a time.
 */
export class WaitQueue<T extends QueueLinks<T>> {
  #head: T | undefined = undefined;
  #tail: T | undefined = undefined;
  #length = 0;

  get length(): number {
    return this.#length;
  }

  /** The oldest entry, the next to leave; undefined when empty. */
  get head(): T | undefined {
    return this.#head;
  }

  push(entry: T): void {
    entry.previous = this.#tail;
    entry.next = undefined;
    if (this.#tail === undefined) this.#head = entry;
    else this.#tail.next = entry;
    this.#tail = entry;
    this.#length++;
  }

  /** Removes and returns the oldest entry. */
  shift(): T | undefined {
    const entry = this.#head;
    if (entry !== undefined) this.#unlink(entry);
    return entry;
  }

  /** Whether `entry` is in this queue: linked to a neighbour, or the only entry. */
  has(entry: T): boolean {
    return entry.previous !== undefined || entry.next !== undefined || this.#head === entry;
  }

  /** Takes `entry` out from wherever it stands; false (nothing done) when it is not queued. */
  remove(entry: T): boolean {
    if (!this.has(entry)) return false;
    this.#unlink(entry);
    return true;
  }

  #unlink(entry: T): void {
    const { previous, next } = entry;
    if (previous === undefined) this.#head = next;
    else previous.next = next;
    if (next === undefined) this.#tail = previous;
    else next.previous = previous;
    entry.previous = undefined;
    entry.next = undefined;
    this.#length--;
  }
}
