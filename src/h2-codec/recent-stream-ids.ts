// A bounded memory of stream ids that closed lately: what tells a frame in flight from a peer's mistake (RFC 9113 §5.1 "closed").

/** How many ids are kept: a frame for a stream closed longer ago than this many closes is judged without it. */
const CAPACITY = 1024;

/**
 * The last {@link CAPACITY} ids added: pushed until there are that many, then a ring. A plain
 * array of small integers, not an Int32Array: a connection that carried a few streams keeps one
 * small array (a typed array and its buffer were about 200 bytes of heap each, two per connection).
 * Lookups scan it, so only paths for frames on unknown streams use it. None until the first id,
 * then made holding it: V8 grows an empty array's first push to 17 slots (152 bytes), and an
 * idle connection that carried one stream held two such.
 */
export class RecentStreamIds {
  private ids: number[] | undefined;
  private next = 0;

  add(streamId: number): void {
    if (this.ids === undefined) {
      this.ids = [streamId];
      return;
    }
    if (this.ids.length < CAPACITY) {
      this.ids.push(streamId);
      return;
    }
    this.ids[this.next] = streamId;
    this.next = (this.next + 1) % CAPACITY;
  }

  has(streamId: number): boolean {
    return streamId !== 0 && this.ids !== undefined && this.ids.includes(streamId);
  }
}
