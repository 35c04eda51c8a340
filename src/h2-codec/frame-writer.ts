// The frame writer (RFC 9113 §4, §6): frames appended to one output buffer per connection and taken as one list of buffers to write per turn.
import { ByteBuffer } from "./byte-buffer.js";
import { CLIENT_PREFACE, DEFAULT_MAX_FRAME_SIZE, FLAG, FRAME, FRAME_HEADER_SIZE } from "./frame-types.js";
import type { HpackEncoder } from "./hpack-encoder.js";

/**
 * DATA payloads up to this size are copied into the output buffer; larger ones go out as the
 * caller's own Buffer, so bulk data is never copied twice (the prototype measured copying small
 * frames into one buffer as the cheap side, allocation per frame as the costly one).
 */
const COPY_LIMIT = 8192;

/**
 * One per connection. Builders append frames; `flush` returns what to write (one buffer, or a
 * list for `writev` when large DATA payloads are referenced) and starts the next turn's list.
 */
export class FrameWriter {
  /** The peer's SETTINGS_MAX_FRAME_SIZE: HEADERS and DATA are split to it. */
  maxFrameSize = DEFAULT_MAX_FRAME_SIZE;
  private readonly out = new ByteBuffer(65536);
  private pieces: Buffer[] = [];
  private pending = 0;

  /** Octets appended since the last flush (what a caller bounds for a peer that does not read). */
  get pendingLength(): number {
    return this.pending + this.out.length - this.out.start;
  }

  /** The buffers to write, in order; empty when nothing was appended. */
  flush(): Buffer[] {
    const tail = this.out.take();
    if (tail !== undefined) this.pieces.push(tail);
    const pieces = this.pieces;
    this.pieces = [];
    this.pending = 0;
    return pieces;
  }

  /** The socket has taken everything flushed so far: the output buffer is written from its start again (ByteBuffer.rewind). */
  reuseOutput(): void {
    if (this.pieces.length === 0) this.out.rewind();
  }

  /** The connection is idle and its output written: the output buffer is let go until the next frame. */
  releaseIdle(): void {
    if (this.pieces.length === 0) this.out.release();
  }

  /** The client connection preface (RFC 9113 §3.4): the client side's first octets, before its SETTINGS. */
  preface(): void {
    this.out.pushBytes(CLIENT_PREFACE);
  }

  /** SETTINGS with `entries` as [id, value] pairs. */
  settings(entries: readonly (readonly [number, number])[]): void {
    this.header(entries.length * 6, FRAME.SETTINGS, 0, 0);
    this.out.reserve(entries.length * 6);
    for (const [id, value] of entries) {
      this.out.buffer.writeUInt16BE(id, this.out.length);
      this.out.buffer.writeUInt32BE(value, this.out.length + 2);
      this.out.length += 6;
    }
  }

  /** Acknowledges the peer's SETTINGS (RFC 9113 §6.5.3). */
  settingsAck(): void {
    this.header(0, FRAME.SETTINGS, FLAG.ACK, 0);
  }

  /** PING with 8 opaque octets (`ack` to answer one with the same octets). */
  ping(opaque: Uint8Array, ack: boolean): void {
    this.header(8, FRAME.PING, ack ? FLAG.ACK : 0, 0);
    this.out.pushBytes(opaque.subarray(0, 8));
  }

  /** Returns `increment` octets of credit on a stream, or the connection (stream 0). */
  windowUpdate(streamId: number, increment: number): void {
    this.header(4, FRAME.WINDOW_UPDATE, 0, streamId);
    this.pushUint32(increment);
  }

  /** Ends one stream with an RFC 9113 §7 error code. */
  rstStream(streamId: number, errorCode: number): void {
    this.header(4, FRAME.RST_STREAM, 0, streamId);
    this.pushUint32(errorCode);
  }

  /** Tells the peer the last stream processed and why the connection ends; `debug` for diagnostics only. */
  goaway(lastStreamId: number, errorCode: number, debug?: Uint8Array): void {
    this.header(8 + (debug?.length ?? 0), FRAME.GOAWAY, 0, 0);
    this.pushUint32(lastStreamId);
    this.pushUint32(errorCode);
    if (debug !== undefined) this.out.pushBytes(debug);
  }

  /**
   * HEADERS for `fields`, encoded by `encoder` straight into the output buffer, followed by
   * CONTINUATION frames when the block passes the peer's MAX_FRAME_SIZE. The frames go out
   * together, so nothing can come between them.
   */
  headers(streamId: number, fields: readonly string[], endStream: boolean, encoder: HpackEncoder, neverIndexed?: readonly number[]): void {
    const out = this.out;
    out.reserve(FRAME_HEADER_SIZE);
    const headerAt = out.length - out.start;
    out.length += FRAME_HEADER_SIZE;
    encoder.encode(fields, out, neverIndexed);
    const blockAt = out.start + headerAt + FRAME_HEADER_SIZE;
    const blockLength = out.length - blockAt;
    const max = this.maxFrameSize;
    const flags = endStream ? FLAG.END_STREAM : 0;
    if (blockLength <= max) {
      writeHeader(out.buffer, out.start + headerAt, blockLength, FRAME.HEADERS, flags | FLAG.END_HEADERS, streamId);
      return;
    }
    // Split: make room for each CONTINUATION's header, then move the fragments back to front.
    const continuations = Math.ceil(blockLength / max) - 1;
    out.reserve(continuations * FRAME_HEADER_SIZE);
    const buffer = out.buffer;
    const first = out.start + headerAt;
    for (let i = continuations; i >= 1; i--) {
      const from = first + FRAME_HEADER_SIZE + i * max;
      const size = Math.min(max, blockLength - i * max);
      const to = first + i * (max + FRAME_HEADER_SIZE) + FRAME_HEADER_SIZE;
      buffer.copyWithin(to, from, from + size);
      writeHeader(buffer, to - FRAME_HEADER_SIZE, size, FRAME.CONTINUATION, i === continuations ? FLAG.END_HEADERS : 0, streamId);
    }
    writeHeader(buffer, first, max, FRAME.HEADERS, flags, streamId);
    out.length += continuations * FRAME_HEADER_SIZE;
  }

  /**
   * DATA carrying `payload`, split at the peer's MAX_FRAME_SIZE (the caller has already fitted it
   * to the flow-control windows); END_STREAM on the last frame. Small payloads are copied, large
   * ones referenced: the caller must not change them until they are written.
   */
  data(streamId: number, payload: Buffer, endStream: boolean): void {
    const max = this.maxFrameSize;
    let at = 0;
    do {
      const size = Math.min(max, payload.length - at);
      const last = at + size === payload.length;
      this.header(size, FRAME.DATA, last && endStream ? FLAG.END_STREAM : 0, streamId);
      if (size <= COPY_LIMIT) {
        this.out.pushBytes(payload.subarray(at, at + size));
      } else {
        const head = this.out.take();
        if (head !== undefined) {
          this.pieces.push(head);
          this.pending += head.length;
        }
        this.pieces.push(payload.subarray(at, at + size));
        this.pending += size;
      }
      at += size;
    } while (at < payload.length);
  }

  private header(length: number, type: number, flags: number, streamId: number): void {
    this.out.reserve(FRAME_HEADER_SIZE);
    writeHeader(this.out.buffer, this.out.length, length, type, flags, streamId);
    this.out.length += FRAME_HEADER_SIZE;
  }

  private pushUint32(value: number): void {
    this.out.reserve(4);
    this.out.buffer.writeUInt32BE(value >>> 0, this.out.length);
    this.out.length += 4;
  }
}

function writeHeader(buffer: Buffer, at: number, length: number, type: number, flags: number, streamId: number): void {
  buffer[at] = length >>> 16;
  buffer[at + 1] = (length >>> 8) & 0xff;
  buffer[at + 2] = length & 0xff;
  buffer[at + 3] = type;
  buffer[at + 4] = flags;
  buffer.writeUInt32BE(streamId & 0x7fffffff, at + 5);
}
