// What an HTTP/2 connection tells its user (heads, data, trailers, resets, the end) and how one is set up (its side, its limits and windows).
import type { AdvanceBudget } from "./advance-budget.js";
import type { CodecError } from "./codec-error.js";
import type { MonotonicClock } from "./flood-budget.js";
import type { H2Stream } from "./h2-stream.js";

/** What the connection tells its user. A call that throws costs its stream (INTERNAL_ERROR), never the connection. */
export interface H2ConnectionHandler {
  /**
   * A new stream's head (server: a request) or a response head, 1xx included (client); already
   * checked (RFC 9113 §8). `fields` (and trailers' below) is valid during the call only: the
   * connection decodes every block into the same list.
   */
  onHead(stream: H2Stream, fields: string[], neverIndexed: readonly number[], endStream: boolean): void;
  /** Server: a request whose header list passed our 16 KiB: the stream is open, to be answered (431) and ended. */
  onOversizedHead(stream: H2Stream): void;
  /**
   * A piece of the stream's body, `source[start, end)`; `consume` it to let the peer send more.
   * The source is the socket's read, valid as long as it is kept: copy or view only what is kept
   * (no view is made per DATA frame, so 1-octet frames cost no Buffer each).
   */
  onData(stream: H2Stream, source: Buffer, start: number, end: number, endStream: boolean): void;
  onTrailers(stream: H2Stream, fields: string[], neverIndexed: readonly number[]): void;
  /** The stream ended before both sides finished: the peer's RST_STREAM (`byPeer`), our stream error, or the connection's end. */
  onReset(stream: H2Stream, errorCode: number, byPeer: boolean): void;
  /** The stream is over, both sides ended (after its last `onData`, `onTrailers` or our last send). */
  onStreamEnd(stream: H2Stream): void;
  /** Output queued for the stream has gone out (after `sendData` returned false). */
  onWritable(stream: H2Stream): void;
  /** The peer sent GOAWAY: no stream above `lastStreamId` was processed (client side: each was reset with REFUSED_STREAM first). */
  onGoaway(lastStreamId: number, errorCode: number): void;
  /** The connection is over; `error` when it ended with a connection error (ours or the peer's framing). */
  onClose(error: CodecError | undefined): void;
  /** The peer's SETTINGS applied (each frame, the first one included): the client side's pool learns its stream limit here. */
  onPeerSettings?(maxConcurrentStreams: number): void;
  /** An exception of ours thrown from a handler call: reported, its stream reset. */
  onFault(error: unknown): void;
}

export interface H2ConnectionOptions {
  /** Server: read the client preface first and take odd stream ids; client: send the preface and open odd ids. */
  readonly role: "server" | "client";
  readonly clock: MonotonicClock;
  /** Streams the peer may open at once (server; CONTRACT §13: 100); beyond, RST_STREAM REFUSED_STREAM. */
  readonly maxConcurrentStreams?: number;
  /** The header list we accept (SETTINGS_MAX_HEADER_LIST_SIZE, 16 KiB as HTTP/1.1's head). */
  readonly maxHeaderListSize?: number;
  /** The most fields one request head may have (default 128, node:http2's maxHeaderListPairs the listener had): past it, as a list too large. */
  readonly maxHeaderFields?: number;
  /** Each stream's receive window (default 65,535, the protocol's initial): what one stream may hold here. */
  readonly streamWindow?: number;
  /** The connection's receive window (default 1 MiB), raised with a WINDOW_UPDATE at the start. */
  readonly connectionWindow?: number;
  /** Shared by connections: while it lasts, a stream's DATA gives the connection's credit back on arrival, so a stream whose reader stops never closes the connection's window to the others. */
  readonly advanceBudget?: AdvanceBudget;
  /** Told the size of every socket read (each a fresh Buffer, outside V8's heap until collected): the relay collects their garbage by it. */
  readonly reads?: ReadCounter;
}

/** What counts the octets of the socket reads (the relay's StreamGarbage). */
export interface ReadCounter {
  streamed(bytes: number): void;
}
