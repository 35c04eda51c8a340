// The HPACK dynamic table (RFC 7541 §2.3.2, §4): a FIFO ring of fields kept as JS strings, sized as 32 + name + value octets.

/** The overhead RFC 7541 §4.1 adds to each entry's name and value octets. */
export const ENTRY_OVERHEAD = 32;

/** The ring's first size, a power of two: a peer's few indexed fields. */
const FIRST_SIZE = 4;

/** Told each entry's absolute sequence number as it is evicted (the encoder's index follows it); an object, not a closure per table. */
export interface EvictionListener {
  evicted(name: string, value: string, sequence: number): void;
}

/**
 * Entries as latin1 strings (one char per octet, so `length` is the octet count): an indexed field
 * hands out the stored string and allocates nothing. Each insertion gets a rising sequence number;
 * the newest entry is HPACK index 62.
 */
export class DynamicTable {
  /** Empty until the first entry (a connection whose peer indexes nothing holds no ring), then a power of two. */
  private names: string[] = [];
  private values: string[] = [];
  /** Ring position of the oldest entry. */
  private head = 0;
  /** How many entries are held. */
  length = 0;
  /** The sum of the entries' sizes, per RFC 7541 §4.1. */
  size = 0;
  /** The sequence number the next held entry gets: the newest has `nextSequence - 1`, the oldest `nextSequence - length`. */
  nextSequence = 0;

  constructor(
    /** The current maximum size (RFC 7541 §4.2): the last size update, or the initial 4,096. */
    public maxSize: number,
    private readonly onEvict?: EvictionListener,
  ) {}

  /** The name at 0-based position `i` from the newest entry (`i < length`). */
  nameAt(i: number): string {
    return this.names[(this.head + this.length - 1 - i) & (this.names.length - 1)] as string;
  }

  /** The value at 0-based position `i` from the newest entry (`i < length`). */
  valueAt(i: number): string {
    return this.values[(this.head + this.length - 1 - i) & (this.values.length - 1)] as string;
  }

  /**
   * Adds a field, evicting from the oldest first until it fits; a field larger than the maximum
   * empties the table and is not added (RFC 7541 §4.4).
   */
  add(name: string, value: string): void {
    const entrySize = ENTRY_OVERHEAD + name.length + value.length;
    if (entrySize > this.maxSize) {
      this.evictTo(0);
      return;
    }
    this.evictTo(this.maxSize - entrySize);
    if (this.length === this.names.length) this.grow();
    const at = (this.head + this.length) & (this.names.length - 1);
    this.names[at] = name;
    this.values[at] = value;
    this.length++;
    this.size += entrySize;
    this.nextSequence++;
  }

  /** Sets the maximum size (a size update), evicting what no longer fits (RFC 7541 §4.3). */
  resize(maxSize: number): void {
    this.maxSize = maxSize;
    this.evictTo(maxSize);
  }

  private evictTo(limit: number): void {
    const mask = this.names.length - 1;
    while (this.size > limit && this.length > 0) {
      const name = this.names[this.head] as string;
      const value = this.values[this.head] as string;
      this.size -= ENTRY_OVERHEAD + name.length + value.length;
      this.onEvict?.evicted(name, value, this.nextSequence - this.length);
      this.names[this.head] = "";
      this.values[this.head] = "";
      this.head = (this.head + 1) & mask;
      this.length--;
    }
  }

  private grow(): void {
    const size = Math.max(FIRST_SIZE, this.names.length * 2);
    const names = new Array<string>(size);
    const values = new Array<string>(size);
    for (let i = 0; i < this.length; i++) {
      const from = (this.head + i) & (this.names.length - 1);
      names[i] = this.names[from] as string;
      values[i] = this.values[from] as string;
    }
    this.names = names;
    this.values = values;
    this.head = 0;
  }
}
