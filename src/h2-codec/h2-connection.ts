// One HTTP/2 connection on a socket, either side (RFC 9113 §5, §6): the frames in, heads, data and trailers out, GOAWAY both ways and the flood budgets; its output, receive windows, stream ids, stream table and the peer's settings are pieces of their own.
import { CodecError, H2_ERROR } from "./codec-error.js";
import type { H2ConnectionHandler, H2ConnectionOptions, ReadCounter } from "./connection-handler.js";
import { ConnectionOutput, type H2Transport, type OutputEvents } from "./connection-output.js";
import { FloodBudget, GLITCH_BUDGET, type MonotonicClock, RAPID_RESET_BUDGET } from "./flood-budget.js";
import { FrameReader, type FrameVisitor } from "./frame-reader.js";
import { DEFAULT_WINDOW, MAX_WINDOW, SETTING } from "./frame-types.js";
import { H2Stream } from "./h2-stream.js";
import { DECODED, HpackDecoder } from "./hpack-decoder.js";
import { checkRequestHead, checkResponseHead, checkTrailers, contentLengthIsZero, isHeadRequest, MessageFacts } from "./message-checks.js";
import { PeerSettings } from "./peer-settings.js";
import { ReceiveWindows } from "./receive-windows.js";
import { StreamIds } from "./stream-ids.js";
import { StreamTable, type StreamTableOwner } from "./stream-table.js";

export type { H2ConnectionHandler, H2ConnectionOptions } from "./connection-handler.js";
export type { H2Transport } from "./connection-output.js";

/**
 * The largest header block buffered (HEADERS and its CONTINUATIONs). A literal block is no larger
 * than the list it decodes to, so a cap at the list's 16 KiB would end the connection (GOAWAY
 * ENHANCE_YOUR_CALM) for any head just past it; up to 64 KiB (nghttp2 has no cap) the decoder says
 * LIST_TOO_LARGE and the stream alone is answered 431, as node:http2's listener did.
 */
const MAX_HEADER_BLOCK = 64 * 1024;

/** The connection: `receive` every socket read; its user answers through `respond`, `sendData`, `sendTrailers`, `reset`, `consume`. */
export class H2Connection implements FrameVisitor, OutputEvents, StreamTableOwner {
  readonly #role: "server" | "client";
  readonly #transport: H2Transport;
  readonly #handler: H2ConnectionHandler;
  readonly #reader: FrameReader;
  readonly #out: ConnectionOutput;
  readonly #decoder: HpackDecoder;
  readonly #facts = new MessageFacts();
  readonly #fields: string[] = [];
  readonly #ids: StreamIds;
  /** Made at the peer's first reset or glitch: an honest connection never spends one, and a full bucket made late is the same as one made at the start. */
  #resets: FloodBudget | undefined;
  #glitches: FloodBudget | undefined;
  readonly #clock: MonotonicClock;
  readonly #maxConcurrent: number;
  readonly #maxHeaderFields: number;
  readonly #windows: ReceiveWindows;
  readonly #table: StreamTable;
  readonly #peer: PeerSettings;
  readonly #reads: ReadCounter | undefined;
  /** RST_STREAM frames we sent for our user's resets (a client side counts them against the peer's rapid-reset limit). */
  resetsSent = 0;
  #goawaySent = false;
  #goawayReceived = false;
  #closed = false;

  constructor(transport: H2Transport, handler: H2ConnectionHandler, options: H2ConnectionOptions) {
    this.#role = options.role;
    this.#ids = new StreamIds(options.role);
    this.#peer = new PeerSettings(options.role);
    this.#transport = transport;
    this.#handler = handler;
    // The connection is its output's and its table's listener itself: an object and two closures
    // each, per connection, were a tenth of an idle one's heap.
    this.#out = new ConnectionOutput(transport, this);
    this.#maxConcurrent = options.maxConcurrentStreams ?? 100;
    this.#maxHeaderFields = options.maxHeaderFields ?? 128;
    const streamWindow = options.streamWindow ?? DEFAULT_WINDOW;
    this.#windows = new ReceiveWindows(this.#out, streamWindow, options.connectionWindow ?? 1024 * 1024, options.advanceBudget);
    this.#table = new StreamTable(this, handler, this.#out, this.#windows, this.#ids);
    const maxHeaderListSize = options.maxHeaderListSize ?? 16 * 1024;
    this.#decoder = new HpackDecoder({ maxHeaderListSize });
    this.#reader = new FrameReader(this, { expectPreface: this.#role === "server", maxHeaderBlockSize: Math.max(maxHeaderListSize, MAX_HEADER_BLOCK) });
    this.#clock = options.clock;
    this.#reads = options.reads;
    const settings: [number, number][] = [
      [SETTING.ENABLE_PUSH, 0],
      [SETTING.MAX_HEADER_LIST_SIZE, maxHeaderListSize],
    ];
    if (this.#role === "server") settings.push([SETTING.MAX_CONCURRENT_STREAMS, this.#maxConcurrent]);
    if (streamWindow !== DEFAULT_WINDOW) settings.push([SETTING.INITIAL_WINDOW_SIZE, streamWindow]);
    const writer = this.#out.writer;
    if (this.#role === "client") writer.preface();
    writer.settings(settings);
    this.#windows.announce();
    this.#out.scheduleFlush();
  }

  /** The streams open now. */
  get openStreams(): number {
    return this.#table.streams.size;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /**
   * The connection carries nothing now (no stream, nothing unwritten): its read and write
   * buffers, its stream table and its decoded-field list are let go until bytes come again. The
   * HPACK tables stay (the peer's next block refers to them); they are kept small by the table
   * size we allow.
   */
  releaseIdleBuffers(): void {
    if (this.#closed || this.#table.streams.size > 0) return;
    this.#reader.releaseIdle();
    this.#decoder.releaseIdle();
    this.#out.writer.releaseIdle();
    this.#table.streams.release();
    // The list every header block is decoded into: its elements go until the next block.
    this.#fields.length = 0;
  }

  /** A header block begun and not finished (the head deadline's business). */
  get headerBlockPending(): boolean {
    return this.#reader.headerBlockPending;
  }

  /** Client side: whether a new stream may be opened now (the peer's limit, no GOAWAY either way). */
  get canOpenStream(): boolean {
    return !this.#closed && !this.#goawaySent && !this.#goawayReceived && this.#table.streams.size < this.#peer.maxConcurrentStreams && this.#ids.localLeft;
  }

  /** Takes one socket read. Any connection error ends the connection here (GOAWAY, then the close). */
  receive(chunk: Buffer): void {
    // Counted by octets read, not body octets: 1-octet DATA frames bring ten times their body in
    // read buffers, each garbage outside V8's heap once read (see StreamGarbage).
    this.#reads?.streamed(chunk.length);
    if (this.#closed) return;
    this.#out.receiving = true;
    try {
      this.#reader.push(chunk);
    } catch (error) {
      if (error instanceof CodecError) this.#connectionError(error);
      else {
        this.#handler.onFault(error);
        this.#connectionError(new CodecError("PROTOCOL_ERROR", "internal error"), H2_ERROR.INTERNAL_ERROR);
      }
    } finally {
      this.#out.receiving = false;
    }
    this.#out.flush();
  }

  /** The socket ended or failed: every stream still open is reset for its user. */
  transportClosed(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#reader.stop();
    this.#table.resetAll(H2_ERROR.CANCEL);
    this.#handler.onClose(undefined);
  }

  /** The socket drained: reading goes on, and streams waiting for it send. */
  transportDrained(): void {
    this.#out.drained();
  }

  // ---- the user's side ----

  /** Client side, when `canOpenStream`: opens a stream with a request head; its id is taken now, so ids rise in the order heads go out. */
  request(fields: readonly string[], endStream: boolean, user: unknown, neverIndexed?: readonly number[]): H2Stream {
    const stream = new H2Stream(this.#ids.openLocal(), this.#peer.initialWindow, this.#windows.streamWindow);
    stream.user = user;
    stream.headRequest = isHeadRequest(fields);
    this.#table.streams.set(stream.id, stream);
    this.#out.writer.headers(stream.id, fields, endStream, this.#out.encoder, neverIndexed);
    if (endStream) stream.endOneSide(true);
    this.#out.scheduleFlush();
    return stream;
  }

  /** Server side: the response head (1xx ones too: `endStream` false, and more heads may follow). */
  respond(stream: H2Stream, fields: readonly string[], endStream: boolean, neverIndexed?: readonly number[]): void {
    if (!this.#canSend(stream)) return;
    this.#out.writer.headers(stream.id, fields, endStream, this.#out.encoder, neverIndexed);
    if (endStream) this.#endLocal(stream);
    this.#out.scheduleFlush();
  }

  /**
   * Sends body octets (and the end with `endStream`). What the windows do not allow waits on the
   * stream; false means it waits: stop reading the source until `onWritable`.
   */
  sendData(stream: H2Stream, data: Buffer, endStream: boolean): boolean {
    if (!this.#canSend(stream)) return true;
    return this.#out.data(stream, data, endStream);
  }

  /** Sends trailers, ending the stream (after any queued data). */
  sendTrailers(stream: H2Stream, fields: readonly string[]): void {
    if (!this.#canSend(stream)) return;
    this.#out.trailers(stream, fields);
  }

  /** The stream is ours to send on still: in the table, our side not ended, the connection up. */
  #canSend(stream: H2Stream): boolean {
    return !this.#closed && !stream.localEnded && this.#table.holds(stream);
  }

  /** Ends a stream with RST_STREAM (`errorCode`, RFC 9113 §7); its user hears nothing more of it. */
  reset(stream: H2Stream, errorCode: number): void {
    if (this.#closed || !this.#table.holds(stream)) return;
    this.#table.sendReset(stream.id, errorCode);
    this.resetsSent++;
    this.#table.forget(stream);
    this.#out.scheduleFlush();
    this.#closeIfDone();
  }

  /** The user took `octets` of a stream's body: credit goes back to the peer (in batches of half a window). */
  consume(stream: H2Stream, octets: number): void {
    if (this.#closed) return;
    // Only what was handed on and not yet given back: a stream that closed returned the rest itself.
    const taken = Math.min(octets, stream.held);
    stream.held -= taken;
    this.#windows.returnToConnection(this.#windows.settle(stream, taken));
    if (this.#table.holds(stream) && !stream.remoteEnded) this.#windows.returnToStream(stream, taken);
  }

  /** The drain: GOAWAY NO_ERROR with the last stream we took; the connection closes once its streams are done. */
  shutdown(): void {
    if (this.#closed || this.#goawaySent) return;
    this.#goawaySent = true;
    this.#out.writer.goaway(this.#ids.lastPeer, H2_ERROR.NO_ERROR);
    this.#out.scheduleFlush();
    this.#closeIfDone();
  }

  /** Ends at once: GOAWAY with `errorCode`, every stream reset. */
  destroy(errorCode: number = H2_ERROR.CANCEL): void {
    if (this.#closed) return;
    this.#connectionError(new CodecError("PROTOCOL_ERROR", "closed by us"), errorCode);
  }

  // ---- frames in (FrameVisitor) ----

  onSettings(entries: Buffer): void {
    this.#peer.apply(entries, this.#out, this.#table.streams);
    this.#out.answered();
    this.#out.writer.settingsAck();
    this.#out.sendBlocked();
    const peerMax = this.#peer.maxConcurrentStreams;
    if (this.#handler.onPeerSettings !== undefined) this.#table.guard(undefined, this.#handler.onPeerSettings, peerMax, undefined, undefined, undefined);
  }

  onSettingsAck(): void {
    // Our settings change nothing the decoder or the reader enforce before the ACK: they are the defaults' bounds already.
  }

  onPing(opaque: Buffer, ack: boolean): void {
    if (ack) return;
    this.#out.answered();
    this.#out.writer.ping(opaque, true);
  }

  onGoaway(lastStreamId: number, errorCode: number): void {
    this.#goawayReceived = true;
    if (this.#role === "client") {
      // Streams above the last id were not processed: their users may send them again elsewhere.
      for (const stream of this.#table.streams.values()) {
        if (stream.id > lastStreamId) this.#table.resetForUser(stream, H2_ERROR.REFUSED_STREAM, true);
      }
    }
    this.#table.guard(undefined, this.#handler.onGoaway, lastStreamId, errorCode, undefined, undefined);
    this.#closeIfDone();
  }

  onWindowUpdate(streamId: number, increment: number): void {
    if (streamId === 0) {
      if (increment === 0) throw new CodecError("PROTOCOL_ERROR", "WINDOW_UPDATE of 0 on the connection");
      this.#out.sendWindow += increment;
      if (this.#out.sendWindow > MAX_WINDOW) throw new CodecError("FLOW_CONTROL_ERROR", "the connection's window past 2^31-1");
      this.#out.sendBlocked();
      return;
    }
    const stream = this.#table.streams.get(streamId);
    // After a close, the peer's WINDOW_UPDATE may still be on its way (§5.1): ignored.
    if (stream === undefined) return this.#ids.checkNotIdle(streamId);
    if (increment === 0) return this.#streamError(stream.id, H2_ERROR.PROTOCOL_ERROR);
    stream.sendWindow += increment;
    if (stream.sendWindow > MAX_WINDOW) return this.#streamError(stream.id, H2_ERROR.FLOW_CONTROL_ERROR);
    this.#out.streamWindowGrew(stream);
  }

  onRstStream(streamId: number, errorCode: number): void {
    const stream = this.#table.streams.get(streamId);
    if (stream === undefined) return this.#ids.checkNotIdle(streamId);
    // Rapid reset (CVE-2023-44487): every stream the peer cancels costs it a token.
    if (!(this.#resets ??= new FloodBudget(RAPID_RESET_BUDGET.burst, RAPID_RESET_BUDGET.perSecond, this.#clock)).spend()) throw new CodecError("ENHANCE_YOUR_CALM", "too many streams reset by the peer");
    this.#table.resetForUser(stream, errorCode, true);
  }

  onPriority(streamId: number, dependsOn: number): void {
    if (dependsOn === streamId) throw new CodecError("PROTOCOL_ERROR", "a stream that depends on itself");
    this.#glitch();
  }

  onUnknownFrame(): void {
    this.#glitch();
  }

  onHeaders(streamId: number, source: Buffer, start: number, end: number, endStream: boolean, dependsOn: number): void {
    const fields = this.#fields;
    // Every block is decoded, even one we refuse, or the HPACK tables part (RFC 9113 §4.3).
    const decoded = this.#decoder.decode(source, start, end, fields);
    const stream = this.#table.streams.get(streamId);
    if (stream === undefined) {
      if (!this.#ids.openPeer(streamId)) return this.#onUnknownStream(streamId, true);
      return this.#openPeerStream(streamId, fields, decoded, endStream, dependsOn);
    }
    if (stream.remoteEnded) return this.#streamError(streamId, H2_ERROR.STREAM_CLOSED);
    if (dependsOn === streamId) return this.#malformed(stream);
    if (this.#role === "client" && !stream.finalHeadSeen) {
      if (decoded !== DECODED.OK || !checkResponseHead(fields, this.#facts)) return this.#malformed(stream);
      const status = fields[1] as string;
      const interim = status.charCodeAt(0) === 0x31; /* 1xx */
      // A 1xx ends nothing, 101 is not for HTTP/2 (RFC 9113 §8.6), and a 1xx has no content-length (RFC 9110 §8.6).
      if (interim && (endStream || status === "101" || this.#facts.contentLength >= 0)) return this.#malformed(stream);
      if (!interim) {
        stream.finalHeadSeen = true;
        // RFC 9110 §6.4.1: a HEAD's, a 204's and a 304's response has no content; its content-length (a 204 may only say 0,
        // §8.6) is not a promise of DATA, and DATA octets are malformed (nghttp2's rule too).
        const noContent = stream.headRequest || status === "204" || status === "304";
        if (status === "204" && this.#facts.contentLength >= 0 && !contentLengthIsZero(fields)) return this.#malformed(stream);
        stream.contentLength = noContent ? 0 : this.#facts.contentLength;
      }
      if (endStream && !this.#bodyLengthMatches(stream)) return this.#malformed(stream);
      const closes = endStream && stream.endOneSide(false);
      this.#table.guard(stream, this.#handler.onHead, stream, fields, this.#decoder.neverIndexed, endStream);
      if (closes) this.#table.complete(stream);
      return;
    }
    // Trailers: they end the stream, and hold regular fields only (RFC 9113 §8.1).
    this.#facts.contentLength = stream.contentLength;
    if (!endStream || decoded !== DECODED.OK || !checkTrailers(fields, this.#facts) || !this.#bodyLengthMatches(stream)) return this.#malformed(stream);
    const closes = stream.endOneSide(false);
    this.#table.guard(stream, this.#handler.onTrailers, stream, fields, this.#decoder.neverIndexed, undefined);
    if (closes) this.#table.complete(stream);
  }

  onData(streamId: number, source: Buffer, start: number, end: number, endStream: boolean, flowControlled: number): void {
    const octets = end - start;
    this.#windows.receive(flowControlled);
    const stream = this.#table.streams.get(streamId);
    if (stream === undefined || stream.remoteEnded) {
      // Nobody takes these octets: the connection's credit goes back at once.
      this.#windows.returnToConnection(flowControlled);
      if (stream !== undefined) return this.#streamError(streamId, H2_ERROR.STREAM_CLOSED);
      return this.#onUnknownStream(streamId, false);
    }
    if (flowControlled > stream.receiveWindow) {
      this.#windows.returnToConnection(flowControlled);
      return this.#streamError(streamId, H2_ERROR.FLOW_CONTROL_ERROR);
    }
    stream.receiveWindow -= flowControlled;
    // Padding is nobody's to consume: its credit goes back now.
    const padding = flowControlled - octets;
    if (padding > 0) {
      this.#windows.returnToConnection(padding);
      this.#windows.returnToStream(stream, padding);
    }
    if (this.#role === "client" && !stream.finalHeadSeen) return this.#malformed(stream);
    stream.received += octets;
    if (stream.contentLength >= 0 && stream.received > stream.contentLength) return this.#malformed(stream);
    if (endStream && !this.#bodyLengthMatches(stream)) return this.#malformed(stream);
    // An empty DATA frame that ends nothing is a known flood (CVE-2019-9518).
    if (flowControlled === 0 && !endStream) this.#glitch();
    stream.held += octets;
    this.#windows.handedOn(stream, octets);
    // The state moves before the user hears, so an answer it ends in the call sees the request ended.
    const closes = endStream && stream.endOneSide(false);
    if (octets > 0 || endStream) this.#table.guard(stream, this.#handler.onData, stream, source, start, end, endStream);
    if (closes) this.#table.complete(stream);
  }

  // ---- inside ----

  /** Server: a HEADERS on a new id: refused past the limit, malformed or too large, else handed on. */
  #openPeerStream(streamId: number, fields: string[], decoded: number, endStream: boolean, dependsOn: number): void {
    if (this.#goawaySent) return; // above the GOAWAY's last id (RFC 9113 §6.8): ignored
    if (this.#table.streams.size >= this.#maxConcurrent) {
      this.#glitch();
      this.#table.sendReset(streamId, H2_ERROR.REFUSED_STREAM);
      return;
    }
    const stream = new H2Stream(streamId, this.#peer.initialWindow, this.#windows.streamWindow);
    this.#table.streams.set(streamId, stream);
    if (endStream) stream.endOneSide(false);
    if (decoded === DECODED.LIST_TOO_LARGE || fields.length > this.#maxHeaderFields * 2) return this.#table.guard(stream, this.#handler.onOversizedHead, stream, undefined, undefined, undefined);
    if (dependsOn === streamId || !checkRequestHead(fields, this.#facts)) return this.#malformed(stream);
    stream.contentLength = this.#facts.contentLength;
    if (endStream && !this.#bodyLengthMatches(stream)) return this.#malformed(stream);
    this.#table.guard(stream, this.#handler.onHead, stream, fields, this.#decoder.neverIndexed, endStream);
  }

  /** A frame for a stream not in the table (see StreamIds.answersUnknown). */
  #onUnknownStream(streamId: number, headers: boolean): void {
    if (this.#ids.answersUnknown(streamId, headers)) this.#streamError(streamId, H2_ERROR.STREAM_CLOSED);
  }

  /** A malformed message (RFC 9113 §8.1.1): RST_STREAM PROTOCOL_ERROR, never handed on. */
  #malformed(stream: H2Stream): void {
    this.#streamError(stream.id, H2_ERROR.PROTOCOL_ERROR);
  }

  /** A stream error (RFC 9113 §5.4.2): RST_STREAM; it counts against the glitch budget (MadeYouReset, CVE-2025-8671). */
  #streamError(streamId: number, errorCode: number): void {
    this.#glitch();
    this.#out.answered();
    this.#table.sendReset(streamId, errorCode);
    const stream = this.#table.streams.get(streamId);
    if (stream !== undefined) this.#table.resetForUser(stream, errorCode, false);
  }

  #glitch(): void {
    if (!(this.#glitches ??= new FloodBudget(GLITCH_BUDGET.burst, GLITCH_BUDGET.perSecond, this.#clock)).spend()) throw new CodecError("ENHANCE_YOUR_CALM", "too many protocol glitches");
  }

  #bodyLengthMatches(stream: H2Stream): boolean {
    return stream.contentLength < 0 || stream.received === stream.contentLength;
  }

  /**
   * Our END_STREAM went out. An answer complete before its request leaves the stream half-closed
   * (local), as nghttp2 does: the rest of the request is read (its user drops it) and the stream
   * keeps its flow-control rules (h2spec 6.9.1/3 on an answer of our own), rather than a
   * RST_STREAM NO_ERROR (RFC 9113 §8.1 allows either).
   */
  /** The output's event (OutputEvents), not the user's: our END_STREAM went out on the stream. */
  endedLocally(stream: H2Stream): void {
    this.#endLocal(stream);
  }

  /** The output's event (OutputEvents), not the user's: the stream's queued output has gone. */
  writable(stream: H2Stream): void {
    this.#table.writable(stream);
  }

  /** The table's event (StreamTableOwner), not the user's: a stream left. */
  streamGone(): void {
    this.#closeIfDone();
  }

  #endLocal(stream: H2Stream): void {
    if (stream.endOneSide(true)) this.#table.complete(stream);
  }

  #connectionError(error: CodecError, code: number = error.h2Code): void {
    if (this.#closed) return;
    this.#out.writer.goaway(this.#ids.lastPeer, code);
    this.#out.flush();
    this.#closed = true;
    this.#reader.stop();
    this.#transport.end();
    this.#table.resetAll(code);
    this.#handler.onClose(error);
  }

  /** After GOAWAY either way, the connection ends once its last stream does. */
  #closeIfDone(): void {
    if (this.#closed || this.#table.streams.size > 0 || !(this.#goawaySent || this.#goawayReceived)) return;
    this.#out.flush();
    this.#closed = true;
    this.#reader.stop();
    this.#transport.end();
    this.#handler.onClose(undefined);
  }
}
