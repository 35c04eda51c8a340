// Stream identifiers on one connection (RFC 9113 §5.1, §5.1.1): the ids each side has opened, those closed or reset lately, and what a frame for an id not in the table means.
import { CodecError } from "./codec-error.js";
import { MAX_WINDOW } from "./frame-types.js";
import { RecentStreamIds } from "./recent-stream-ids.js";

/** One per connection. Clients open odd ids and servers answer on them; ids only rise, and an id is never used twice. */
export class StreamIds {
  /** The highest id the peer opened (server side; 0 on the client, whose peer opens none). */
  lastPeer = 0;
  /** The highest id we opened (client side). */
  lastLocal = 0;
  readonly #server: boolean;
  /** Streams we reset lately: the peer's frames for them may be in flight, and are ignored. */
  readonly #recentlyReset = new RecentStreamIds();
  /** Streams that closed lately, however: HEADERS on one is STREAM_CLOSED, on an id never opened PROTOCOL_ERROR (§5.1.1). */
  readonly #recentlyClosed = new RecentStreamIds();

  constructor(role: "server" | "client") {
    this.#server = role === "server";
  }

  /** Client side: whether an id is left to open a stream with (they end at 2^31-1). */
  get localLeft(): boolean {
    return this.lastLocal < MAX_WINDOW - 2;
  }

  /** Client side: the id of the stream opened now. */
  openLocal(): number {
    this.lastLocal = this.lastLocal === 0 ? 1 : this.lastLocal + 2;
    return this.lastLocal;
  }

  /** Server side: whether a HEADERS on `id`, not in the table, opens a stream (a client's id above every one before); if so it is the last now. */
  openPeer(id: number): boolean {
    if (!this.#server || (id & 1) === 0 || id <= this.lastPeer) return false;
    this.lastPeer = id;
    return true;
  }

  /** We sent RST_STREAM on `id`. */
  wasReset(id: number): void {
    this.#recentlyReset.add(id);
  }

  /** The stream `id` left the table. */
  wasClosed(id: number): void {
    this.#recentlyClosed.add(id);
  }

  /** A frame on an idle stream (one never opened, above the last) is a connection error (RFC 9113 §5.1). */
  checkNotIdle(id: number): void {
    const ownParity = this.#server ? (id & 1) === 0 : (id & 1) === 1;
    const last = ownParity ? this.lastLocal : this.lastPeer;
    if (id > last) throw new CodecError("PROTOCOL_ERROR", `a frame on idle stream ${id}`);
  }

  /**
   * A frame for a stream not in the table: true when the stream itself is answered (RST_STREAM
   * STREAM_CLOSED). Idle ids (never opened) are a connection error; ids we reset lately are in
   * flight and ignored (false); other closed ids are the peer's error: HEADERS end the connection
   * (its HPACK state is fine, but the stream cannot be reopened), the rest the stream.
   */
  answersUnknown(id: number, headers: boolean): boolean {
    this.checkNotIdle(id);
    if (this.#recentlyReset.has(id)) return false;
    if (headers) {
      if (this.#recentlyClosed.has(id)) throw new CodecError("STREAM_CLOSED", `HEADERS on closed stream ${id}`);
      throw new CodecError("PROTOCOL_ERROR", `HEADERS on stream ${id}, below one opened since`);
    }
    return true;
  }
}
