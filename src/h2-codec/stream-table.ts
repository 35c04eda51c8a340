// The connection's open streams and how each one leaves: completed or reset, its user told once (inside a fault boundary), its window credit and id handed back.
import { H2_ERROR } from "./codec-error.js";
import type { H2ConnectionHandler } from "./connection-handler.js";
import type { ConnectionOutput } from "./connection-output.js";
import { type H2Stream, NO_QUEUE, STREAM_STATE } from "./h2-stream.js";
import type { ReceiveWindows } from "./receive-windows.js";
import { StreamIdMap } from "./stream-id-map.js";
import type { StreamIds } from "./stream-ids.js";

/** What the table needs of its connection. */
export interface StreamTableOwner {
  /** The connection has ended: what a stream held of the window is nobody's to give back. */
  readonly closed: boolean;
  /** A stream left: after GOAWAY either way, the connection may be done. */
  streamGone(): void;
}

/** The open streams by id; every way out of the table goes through here. */
export class StreamTable {
  readonly streams = new StreamIdMap<H2Stream>();
  readonly #owner: StreamTableOwner;
  readonly #handler: H2ConnectionHandler;
  readonly #out: ConnectionOutput;
  readonly #windows: ReceiveWindows;
  readonly #ids: StreamIds;

  constructor(owner: StreamTableOwner, handler: H2ConnectionHandler, out: ConnectionOutput, windows: ReceiveWindows, ids: StreamIds) {
    this.#owner = owner;
    this.#handler = handler;
    this.#out = out;
    this.#windows = windows;
    this.#ids = ids;
  }

  /** The stream is still this one's (not forgotten, its id not reused by a new object). */
  holds(stream: H2Stream): boolean {
    return this.streams.get(stream.id) === stream;
  }

  /** RST_STREAM out; the peer's frames for the stream may still be on their way, and are ignored. */
  sendReset(streamId: number, errorCode: number): void {
    this.#out.writer.rstStream(streamId, errorCode);
    this.#ids.wasReset(streamId);
  }

  /** Both sides done: out of the table, and its user told (after any handler call under way returns). */
  complete(stream: H2Stream): void {
    if (!this.forget(stream)) return;
    this.guard(undefined, this.#handler.onStreamEnd, stream, undefined, undefined, undefined);
    this.#letGoOfUser(stream);
    this.#owner.streamGone();
  }

  /** Ended before both sides finished: out of the table, and its user told why. */
  resetForUser(stream: H2Stream, errorCode: number, byPeer: boolean): void {
    if (!this.forget(stream)) return;
    this.guard(undefined, this.#handler.onReset, stream, errorCode, byPeer, undefined);
    this.#letGoOfUser(stream);
    this.#owner.streamGone();
  }

  resetAll(errorCode: number): void {
    for (const stream of this.streams.values()) this.resetForUser(stream, errorCode, false);
  }

  /** Takes the stream out of the table and returns what its user held of the connection's window. */
  forget(stream: H2Stream): boolean {
    if (!this.holds(stream)) return false;
    // A stream that ends while its user still holds body octets: they are the connection's again.
    if (stream.held > 0) {
      const owed = this.#windows.settle(stream, stream.held);
      if (!this.#owner.closed) this.#windows.returnToConnection(owed);
      stream.held = 0;
    }
    this.streams.delete(stream.id);
    this.#ids.wasClosed(stream.id);
    this.#out.forget(stream);
    stream.state = STREAM_STATE.CLOSED;
    stream.queue = NO_QUEUE;
    return true;
  }

  /**
   * Calls one of the handler's methods with up to five arguments; what it throws is reported and
   * costs its stream only. Arguments rather than a closure: a closure per event was 0.2-0.4 KB of
   * garbage per gRPC call (bench/grpc-profile.mjs --heap).
   */
  guard<A, B, C, D, E = undefined>(stream: H2Stream | undefined, call: (this: H2ConnectionHandler, a: A, b: B, c: C, d: D, e: E) => void, a: A, b: B, c: C, d: D, e?: E): void {
    try {
      call.call(this.#handler, a, b, c, d, e as E);
    } catch (error) {
      this.#handler.onFault(error);
      if (stream !== undefined && this.holds(stream)) {
        this.sendReset(stream.id, H2_ERROR.INTERNAL_ERROR);
        this.resetForUser(stream, H2_ERROR.INTERNAL_ERROR, false);
      }
    }
  }

  /** Output queued on the stream went, and its user asked to hear: told while the stream is still in the table. */
  writable(stream: H2Stream): void {
    if (this.holds(stream)) this.guard(stream, this.#handler.onWritable, stream, undefined, undefined, undefined);
  }

  /**
   * After a stream's last event nothing of the codec reads its user again, so it is let go: a
   * closed stream object can outlive that event, and through it the finished exchange did. On
   * the gRPC bench a quarter of what the relay allocated outlived V8's young generation that
   * way, to be freed only by a full collection: 3.4 KB a call, 0.9 KB with the link cut
   * (bench/grpc-profile.mjs --heap, BENCH_HEAP_SURVIVORS=1). The holder was found later: the
   * old hash tables of the Map the streams were kept in (see StreamIdMap).
   */
  #letGoOfUser(stream: H2Stream): void {
    stream.user = undefined;
  }
}
