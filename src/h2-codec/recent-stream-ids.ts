// A bounded memory of stream ids that closed lately: what tells a frame in flight from a peer's mistake (RFC 9113 §5.1 "closed").

/** How many ids are kept: a frame for a stream closed longer ago than this many closes is judged without it. */
const CAPACITY = 1024;

/** The ring's first size: a connection that carried a few streams keeps a few ids, not 4 KB (two rings per connection). */
const FIRST_SIZE = 8;

/** The last {@link CAPACITY} ids added, in a ring that grows to that size as ids come; lookups scan it, so only paths for frames on unknown streams use it. */
export class RecentStreamIds {
  private ids = new Int32Array(0);
  private next = 0;

  add(streamId: number): void {
    if (this.next === this.ids.length) {
      if (this.ids.length < CAPACITY) {
        const grown = new Int32Array(Math.min(CAPACITY, Math.max(FIRST_SIZE, this.ids.length * 2)));
        grown.set(this.ids);
        this.ids = grown;
      } else {
        this.next = 0;
      }
    }
    this.ids[this.next++] = streamId;
  }

  has(streamId: number): boolean {
    return streamId !== 0 && this.ids.includes(streamId);
  }
}
