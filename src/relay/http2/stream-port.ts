// One h2 stream of the codec as an exchange uses it, either side: body pieces in (paused at will, the peer's window holding the rest), the end, trailers, the close; body, end and trailers out.
import { H2_ERROR } from "../../h2-codec/codec-error.js";
import type { H2Connection, H2ConnectionHandler } from "../../h2-codec/h2-connection.js";
import type { H2Stream } from "../../h2-codec/h2-stream.js";
import { faultAt } from "../fault-injection.js";
import { HeldOctets } from "../held-octets.js";

/**
 * What a stream tells its user: body pieces (while not paused), the peer's trailers, its end
 * (after the trailers, if any), room to write again, and the close (completed, or reset either
 * way: the port's `rstCode` says which). The close is told after the call that caused it returns.
 * An object with methods, not a callback per event: an exchange is its streams' user, and the
 * closures it set per stream were the largest garbage of a gRPC call (bench/grpc-profile.mjs --heap).
 */
export interface StreamUser {
  /** A body piece from the peer: a view into the socket's read, valid during the call. */
  streamData(chunk: Buffer): void;
  streamTrailers(fields: readonly string[]): void;
  streamEnd(): void;
  streamDrain(): void;
  streamClosed(): void;
  /** A defect of ours in one of these calls; without it, reported and the stream reset. */
  streamFault?(error: unknown): void;
}

/** The user of a stream nobody has taken yet (or that nobody reads any more): told everything, does nothing. */
export const NO_STREAM_USER: StreamUser = Object.freeze({
  streamData(): void {},
  streamTrailers(): void {},
  streamEnd(): void {},
  streamDrain(): void {},
  streamClosed(): void {},
});

/**
 * Every call to the user is made inside this stream's fault boundary: a defect of ours (or a
 * send the codec refuses) in it goes to `streamFault`, which an exchange has end both of its
 * sides; without one it is reported and this stream reset. It never reaches the codec's read or
 * a microtask of its own, where it would cost more than its stream. The boundary is here, once,
 * so a user's methods are plain methods: no wrapper per event per stream.
 */
export class StreamPort<User extends StreamUser = StreamUser> {
  user: User;
  /** No more frames either way: completed or reset. */
  closed = false;
  /** NO_ERROR for a stream that completed; the RST_STREAM code (either side's) otherwise. */
  rstCode = H2_ERROR.NO_ERROR as number;
  /** Nothing is handed on while set (the client side, until its stream is routed). */
  protected holding = false;
  #paused = false;
  /**
   * Octets held while paused (their credit not returned: the peer's window bounds them), then the
   * end: copied into one buffer, as a piece is a view that keeps its whole socket read alive.
   */
  #pending: HeldOctets | undefined;
  #endPending = false;
  #trailersPending: readonly string[] | undefined;
  #flushing = false;
  /** Both sides ended while the peer's last pieces still wait for the user: closed once they are handed on. */
  #completeWhenDelivered = false;
  /** The turn (see `currentTurn`) in which a small piece was last handed on at once. */
  #smallTurn = -1;

  constructor(
    readonly connection: H2Connection,
    readonly stream: H2Stream,
    /** The relay's fault report, shared by every port of a listener or pool. */
    readonly reportFault: (error: unknown) => void,
    /** Who is told until a user takes the stream. */
    idleUser: User,
  ) {
    this.user = idleUser;
  }

  get id(): number {
    return this.stream.id;
  }

  /** The peer has sent END_STREAM, or the stream is over (its body, if any, handed on or pending): the codec's state, moved before we hear. */
  get remoteEnded(): boolean {
    return this.stream.remoteEnded;
  }

  /** Stops handing on body pieces: the peer's window fills, and it waits. */
  pause(): void {
    this.#paused = true;
  }

  /** Hands on what was held (after the caller returns) and then each piece as it comes. */
  resume(): void {
    if (!this.#paused) return;
    this.#paused = false;
    this.deliverLater();
  }

  /** Body octets; false when they wait for the peer's window: `streamDrain` says when to go on. */
  write(chunk: Buffer): boolean {
    if (this.closed) return true;
    return this.connection.sendData(this.stream, chunk, false);
  }

  /** Ends our side (after `chunk`), or with trailers (the codec's flat list, names lower-case). */
  end(chunk?: Buffer, trailers?: readonly string[]): void {
    if (this.closed) return;
    if (trailers !== undefined) {
      if (chunk !== undefined && chunk.length > 0) this.connection.sendData(this.stream, chunk, false);
      this.connection.sendTrailers(this.stream, trailers);
      return;
    }
    this.connection.sendData(this.stream, chunk ?? EMPTY, true);
  }

  /** RST_STREAM: CANCEL (`cancel`) or INTERNAL_ERROR; nothing more is sent or handed on. */
  reset(cancel: boolean): void {
    if (this.closed) return;
    const code = cancel ? H2_ERROR.CANCEL : H2_ERROR.INTERNAL_ERROR;
    this.connection.reset(this.stream, code);
    this.closeWith(code);
  }

  // ---- what the connection's handler tells ----

  /**
   * A body piece from the peer, `source[start, end)` of the socket's read: copied when held, and
   * a view made only when it is handed on at once (so a piece held costs no Buffer of its own).
   */
  received(source: Buffer, start: number, end: number, endStream: boolean): void {
    if (this.closed) return;
    const octets = end - start;
    if (this.holding || this.#paused || this.#pending !== undefined || this.#flushing) {
      if (octets > 0) (this.#pending ??= new HeldOctets()).append(source, start, end);
      if (endStream) this.#endPending = true;
      return;
    }
    if (octets > 0 && octets < SMALL_PIECE) {
      // A second small piece in one socket read: held and handed on with the rest of the read as
      // one, so 1-octet DATA frames reach the app as one frame per read, not one per octet (10
      // octets on the wire and a frame's work each). The first goes at once: a gRPC message waits for nothing.
      const turn = currentTurn();
      if (this.#smallTurn === turn) {
        (this.#pending = new HeldOctets()).append(source, start, end);
        if (endStream) this.#endPending = true;
        this.deliverLater();
        return;
      }
      this.#smallTurn = turn;
    }
    if (octets > 0) this.#hand(source.subarray(start, end));
    if (endStream && !this.closed) this.within(this.#tellEnd, undefined, undefined);
  }

  /** The peer's trailers: its side ends with them. */
  receivedTrailers(fields: readonly string[]): void {
    if (this.closed) return;
    if (this.holding || this.#paused || this.#pending !== undefined || this.#flushing) {
      this.#trailersPending = [...fields];
      this.#endPending = true;
      return;
    }
    this.within(this.#tellTrailers, fields, undefined);
    if (!this.closed) this.within(this.#tellEnd, undefined, undefined);
  }

  /** Reset by the peer, by a stream error, or by the connection's end. */
  wasReset(code: number): void {
    if (this.closed) return;
    this.closeWith(code);
  }

  /**
   * Both sides ended. What the peer sent before its end and the user has not taken yet (paused:
   * the other side's window was full) is still handed on, then the end, and only then the close:
   * a whole answer that came while the client's window held it back is the client's whole.
   */
  completed(): void {
    if (this.closed) return;
    if (this.#pending !== undefined || this.#endPending) {
      this.#completeWhenDelivered = true;
      return;
    }
    this.closeWith(H2_ERROR.NO_ERROR);
  }

  /** Room to write again (the codec's `onWritable`). */
  writable(): void {
    this.within(this.#tellDrain, undefined, undefined);
  }

  #tellTrailers(fields: readonly string[]): void {
    this.user.streamTrailers(fields);
  }

  #tellEnd(): void {
    this.user.streamEnd();
  }

  #tellDrain(): void {
    this.user.streamDrain();
  }

  #tellData(chunk: Buffer): void {
    this.user.streamData(chunk);
  }

  #tellClosed(): void {
    this.user.streamClosed();
  }

  /** A defect of ours in a call to the user: the user's own handler, else reported and the stream reset. */
  protected fault(error: unknown): void {
    const user = this.user;
    if (user.streamFault !== undefined) user.streamFault(error);
    else {
      this.reportFault(error);
      this.reset(false);
    }
  }

  protected deliverLater(): void {
    if (this.holding || this.#paused || this.#flushing) return;
    if (this.#pending === undefined && !this.#endPending) return;
    this.#flushing = true;
    queueMicrotask(() => this.#deliverPending());
  }

  protected closeWith(code: number): void {
    this.closed = true;
    this.rstCode = code;
    this.#pending = undefined;
    queueMicrotask(() => this.within(this.#tellClosed, undefined, undefined));
  }

  /**
   * Calls `call` (a method of this port that tells the user, called on it) with up to two
   * arguments inside this stream's fault boundary: the one boundary every event passes.
   * Arguments rather than a closure, so that an event allocates nothing to get through it.
   */
  protected within<A, B>(call: (this: this, a: A, b: B) => void, a: A, b: B): void {
    try {
      faultAt("h2 stream event");
      call.call(this, a, b);
    } catch (error) {
      this.fault(error);
    }
  }

  #hand(chunk: Buffer): void {
    this.connection.consume(this.stream, chunk.length);
    this.within(this.#tellData, chunk, undefined);
  }

  #deliverPending(): void {
    this.#flushing = false;
    const pending = this.#pending;
    if (pending !== undefined && !this.#paused && !this.holding && !this.closed) {
      // All that was held, as one piece: a user that pauses on it holds its own (what comes next is held again here).
      this.#pending = undefined;
      this.#hand(pending.take());
    }
    if (this.#paused || this.holding || this.closed || !this.#endPending) return;
    this.#endPending = false;
    const trailers = this.#trailersPending;
    this.#trailersPending = undefined;
    if (trailers !== undefined) this.within(this.#tellTrailers, trailers, undefined);
    if (!this.closed) this.within(this.#tellEnd, undefined, undefined);
    if (this.#completeWhenDelivered && !this.closed) this.closeWith(H2_ERROR.NO_ERROR);
  }
}

const EMPTY = Buffer.alloc(0);
/** Pieces under this size are coalesced when several come in one read (StreamPort.received). */
const SMALL_PIECE = 1024;

let turn = 0;
let turnEnding = false;
/** A number that changes once the current macrotask's synchronous work (one socket read's frames) is done. */
function currentTurn(): number {
  if (!turnEnding) {
    turnEnding = true;
    queueMicrotask(endTurn);
  }
  return turn;
}
function endTurn(): void {
  turn++;
  turnEnding = false;
}

/** The codec's stream events that go to the stream's port as they are, for either side's handler (the listener's, the pool's). */
export const PORT_EVENTS = {
  onData: (stream, source, start, end, endStream) => (stream.user as StreamPort | undefined)?.received(source, start, end, endStream),
  onTrailers: (stream, fields) => (stream.user as StreamPort | undefined)?.receivedTrailers(fields),
  onWritable: (stream) => (stream.user as StreamPort | undefined)?.writable(),
} satisfies Pick<H2ConnectionHandler, "onData" | "onTrailers" | "onWritable">;
