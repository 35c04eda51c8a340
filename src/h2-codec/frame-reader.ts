// The frame reader (RFC 9113 §4, §6): socket chunks of any split in, frames out through a visitor; DATA as bounds in the chunks, header blocks joined.
import { CodecError } from "./codec-error.js";
import { checkFrameHeader, checkSettings } from "./frame-checks.js";
import { CLIENT_PREFACE, DEFAULT_MAX_FRAME_SIZE, FLAG, FRAME, FRAME_HEADER_SIZE } from "./frame-types.js";

/**
 * What the reader hands on, one call per frame (DATA: per piece as it arrives). Buffers are views
 * into the socket's chunks or the reader's scratch: valid during the call only, except DATA's
 * source, which stays valid as long as the chunk (node gives each read a fresh Buffer).
 */
export interface FrameVisitor {
  /**
   * A piece of a DATA frame's data, `source[start, end)`, padding stripped; `endStream` on the
   * frame's last piece; `flowControlled` sums to the frame's length (padding counts, §6.9).
   * Bounds rather than a view: a view per frame was nearly all the garbage of a flood of 1-octet
   * frames (~100 bytes each), and its user copies or views only what it keeps.
   */
  onData(streamId: number, source: Buffer, start: number, end: number, endStream: boolean, flowControlled: number): void;
  /**
   * A complete header block, `source[start, end)` (HEADERS and its CONTINUATIONs joined, padding
   * and priority stripped), valid during the call only; `dependsOn` is -1 without the PRIORITY
   * flag. Bounds rather than a view: the block is decoded in the call, so a Buffer view per head
   * would be garbage at once.
   */
  onHeaders(streamId: number, source: Buffer, start: number, end: number, endStream: boolean, dependsOn: number): void;
  /** A PRIORITY frame: only checked (a stream may not depend on itself, §5.3.1), never acted on. */
  onPriority(streamId: number, dependsOn: number): void;
  /** The peer ended a stream, with an RFC 9113 §7 error code. */
  onRstStream(streamId: number, errorCode: number): void;
  /** A SETTINGS frame's entries (6 octets each: id, value), values already checked. */
  onSettings(entries: Buffer): void;
  /** The peer took our last SETTINGS: our HPACK decoder's table size and our frame size apply from here. */
  onSettingsAck(): void;
  /** A PING, or the ACK of ours; `opaque` is the 8 octets to echo back. */
  onPing(opaque: Buffer, ack: boolean): void;
  /** The peer will not process streams above `lastStreamId`; `debug` for the log only. */
  onGoaway(lastStreamId: number, errorCode: number, debug: Buffer): void;
  /** An increment of 0 is the connection's call to make: a stream error on a stream, a connection error on 0 (§6.9). */
  onWindowUpdate(streamId: number, increment: number): void;
  /** A frame of a type RFC 9113 does not define: to be ignored (§4.1), counted by the caller. */
  onUnknownFrame(type: number, streamId: number, length: number): void;
}

/** The reader's limits. */
export interface FrameReaderOptions {
  /** Read the client connection preface first (the server side). */
  readonly expectPreface?: boolean;
  /** CONTINUATION frames allowed after one HEADERS (default 8, nghttp2's); the next is a flood: ENHANCE_YOUR_CALM. */
  readonly maxContinuations?: number;
  /** The most octets one header block may take across its frames (default 64 KiB): past it, ENHANCE_YOUR_CALM. */
  readonly maxHeaderBlockSize?: number;
}

const PREFACE = 0;
const HEADER = 1;
const NO_ROOM = Buffer.alloc(0);
const DATA_PAD = 2;
const DATA = 3;
const SKIP = 4;
const PAYLOAD = 5;

/** One per connection: `push` every chunk read from the socket; a `CodecError` thrown from it ends the connection, and the reader with it. */
export class FrameReader {
  /** Our SETTINGS_MAX_FRAME_SIZE: larger frames are FRAME_SIZE_ERRORs. */
  maxFrameSize = DEFAULT_MAX_FRAME_SIZE;
  private state: number;
  private have = 0;
  /** A frame header that spans socket reads is joined here: taken at the first such header, let go while idle. */
  private head = NO_ROOM;
  /** Frames that span socket reads are joined here; taken at the first such frame, let go while idle (releaseIdle). */
  private scratch = NO_ROOM;
  private length = 0;
  private type = 0;
  private flags = 0;
  private streamId = 0;
  /** DATA octets left to hand on, then padding (or an unknown frame's payload) left to skip. */
  private dataLeft = 0;
  private padding = 0;
  private skipLeft = 0;
  private settingsSeen = false;
  /** A header block under way: its stream, flags and the fragments joined so far. */
  private inBlock = false;
  private blockStream = 0;
  private blockEndStream = false;
  private blockDependsOn = -1;
  private blockLength = 0;
  private continuations = 0;
  private block = NO_ROOM;
  /** The connection is over (`stop`). */
  private stopped = false;
  private readonly maxContinuations: number;
  private readonly maxBlock: number;

  constructor(
    private readonly visitor: FrameVisitor,
    options: FrameReaderOptions = {},
  ) {
    this.state = options.expectPreface === true ? PREFACE : HEADER;
    this.maxContinuations = options.maxContinuations ?? 8;
    this.maxBlock = options.maxHeaderBlockSize ?? 65536;
  }

  /** A header block has begun (HEADERS without END_HEADERS) and not finished: what a head deadline watches. */
  get headerBlockPending(): boolean {
    return this.inBlock || (this.state === PAYLOAD && this.type === FRAME.HEADERS);
  }

  /** Once the connection is over, nothing more is read: not the rest of the chunk under way, nor any later one. */
  stop(): void {
    this.stopped = true;
  }

  /** Reads one chunk; frames complete in it are handed on before it returns, the rest waits for the next. */
  push(chunk: Buffer): void {
    let pos = 0;
    const end = chunk.length;
    while (pos < end && !this.stopped) {
      switch (this.state) {
        case PREFACE: {
          const n = Math.min(CLIENT_PREFACE.length - this.have, end - pos);
          if (chunk.compare(CLIENT_PREFACE, this.have, this.have + n, pos, pos + n) !== 0) throw new CodecError("PROTOCOL_ERROR", "not the HTTP/2 client preface");
          pos += n;
          this.have += n;
          if (this.have === CLIENT_PREFACE.length) {
            this.state = HEADER;
            this.have = 0;
          }
          break;
        }
        case HEADER: {
          if (this.have === 0 && end - pos >= FRAME_HEADER_SIZE) {
            this.begin(chunk, pos);
            pos += FRAME_HEADER_SIZE;
          } else {
            const n = Math.min(FRAME_HEADER_SIZE - this.have, end - pos);
            if (this.head === NO_ROOM) this.head = Buffer.alloc(FRAME_HEADER_SIZE);
            chunk.copy(this.head, this.have, pos, pos + n);
            pos += n;
            this.have += n;
            if (this.have < FRAME_HEADER_SIZE) break;
            this.have = 0;
            this.begin(this.head, 0);
          }
          break;
        }
        case DATA_PAD: {
          this.padding = chunk[pos++] as number;
          if (this.padding > this.length - 1) throw new CodecError("PROTOCOL_ERROR", `DATA padding of ${this.padding} in a frame of ${this.length}`);
          this.dataLeft = this.length - 1 - this.padding;
          this.state = DATA;
          if (this.dataLeft === 0) this.deliverData(chunk, pos, 0);
          break;
        }
        case DATA: {
          const n = Math.min(this.dataLeft, end - pos);
          this.dataLeft -= n;
          this.deliverData(chunk, pos, n);
          pos += n;
          break;
        }
        case SKIP: {
          const n = Math.min(this.skipLeft, end - pos);
          pos += n;
          this.skipLeft -= n;
          if (this.skipLeft === 0) this.state = HEADER;
          break;
        }
        case PAYLOAD: {
          if (this.have === 0 && end - pos >= this.length) {
            this.dispatch(chunk, pos);
            pos += this.length;
            break;
          }
          const n = Math.min(this.length - this.have, end - pos);
          chunk.copy(this.scratch, this.have, pos, pos + n);
          pos += n;
          this.have += n;
          if (this.have === this.length) {
            this.have = 0;
            this.dispatch(this.scratch, 0);
          }
          break;
        }
      }
    }
  }

  /** Reads a frame header at `at` and checks what it alone can show. */
  private begin(source: Buffer, at: number): void {
    const length = (source.readUInt16BE(at) << 8) | (source[at + 2] as number);
    const type = source[at + 3] as number;
    const flags = source[at + 4] as number;
    const streamId = source.readUInt32BE(at + 5) & 0x7fffffff;
    if (length > this.maxFrameSize) throw new CodecError("FRAME_SIZE_ERROR", `a frame of ${length} octets passes SETTINGS_MAX_FRAME_SIZE ${this.maxFrameSize}`);
    if (!this.settingsSeen) {
      if (type !== FRAME.SETTINGS || flags & FLAG.ACK) throw new CodecError("PROTOCOL_ERROR", "the connection does not start with SETTINGS");
      this.settingsSeen = true;
    }
    if (this.inBlock) {
      if (type !== FRAME.CONTINUATION || streamId !== this.blockStream) throw new CodecError("PROTOCOL_ERROR", "a frame between HEADERS and its CONTINUATION");
      if (++this.continuations > this.maxContinuations) throw new CodecError("ENHANCE_YOUR_CALM", `more than ${this.maxContinuations} CONTINUATION frames`);
      if (this.blockLength + length > this.maxBlock) throw new CodecError("ENHANCE_YOUR_CALM", `a header block past ${this.maxBlock} octets`);
    } else if (type === FRAME.CONTINUATION) {
      throw new CodecError("PROTOCOL_ERROR", "CONTINUATION without HEADERS before it");
    } else if (type === FRAME.HEADERS && length > this.maxBlock) {
      // Only reachable with a MAX_FRAME_SIZE raised past the bound.
      throw new CodecError("ENHANCE_YOUR_CALM", `a header block past ${this.maxBlock} octets`);
    }
    // Field by field, never `[a, b] = [x, y]`: that destructuring allocated an array and its
    // iterator per frame (~200 bytes of garbage per 1-octet DATA frame, most of a flood's).
    this.length = length;
    this.type = type;
    this.flags = flags;
    this.streamId = streamId;
    if (type > FRAME.CONTINUATION) {
      this.visitor.onUnknownFrame(type, streamId, length);
      this.skip(length);
      return;
    }
    checkFrameHeader(type, flags, streamId, length);
    if (type === FRAME.DATA) {
      if (flags & FLAG.PADDED) return void (this.state = DATA_PAD);
      this.dataLeft = length;
      this.padding = 0;
      this.state = DATA;
      if (length === 0) this.deliverData(source, at, 0);
      return;
    }
    if (length === 0) return this.dispatch(source, at);
    if (length > this.scratch.length) this.scratch = Buffer.allocUnsafe(Math.max(length, this.scratch.length * 2));
    this.state = PAYLOAD;
  }

  /** Hands on `n` DATA octets at `pos`; the frame's last piece carries END_STREAM and the padding's flow-control share. */
  private deliverData(chunk: Buffer, pos: number, n: number): void {
    const last = this.dataLeft === 0;
    if (n === 0 && !last) return;
    const padded = this.flags & FLAG.PADDED ? 1 + this.padding : 0;
    this.visitor.onData(this.streamId, chunk, pos, pos + n, last && (this.flags & FLAG.END_STREAM) !== 0, last ? n + padded : n);
    if (last) this.skip(this.padding);
  }

  private skip(octets: number): void {
    this.skipLeft = octets;
    this.state = octets === 0 ? HEADER : SKIP;
  }

  /** Hands on a complete non-DATA frame whose payload is `source[at, at + length)`. */
  private dispatch(source: Buffer, at: number): void {
    this.state = HEADER;
    const { length, flags, streamId, visitor } = this;
    const end = at + length;
    switch (this.type) {
      case FRAME.HEADERS: {
        let from = at;
        let padding = 0;
        let dependsOn = -1;
        if (flags & FLAG.PADDED) {
          if (length < 1) throw new CodecError("FRAME_SIZE_ERROR", "padded HEADERS without a pad length");
          padding = source[from++] as number;
        }
        if (flags & FLAG.PRIORITY) {
          if (end - from < 5) throw new CodecError("FRAME_SIZE_ERROR", "HEADERS too short for its priority fields");
          dependsOn = source.readUInt32BE(from) & 0x7fffffff;
          from += 5;
        }
        if (padding > end - from) throw new CodecError("PROTOCOL_ERROR", `HEADERS padding of ${padding} past the frame`);
        if (flags & FLAG.END_HEADERS) return visitor.onHeaders(streamId, source, from, end - padding, (flags & FLAG.END_STREAM) !== 0, dependsOn);
        this.inBlock = true;
        this.blockStream = streamId;
        this.blockEndStream = (flags & FLAG.END_STREAM) !== 0;
        this.blockDependsOn = dependsOn;
        this.blockLength = 0;
        this.continuations = 0;
        return this.appendFragment(source, from, end - padding);
      }
      case FRAME.CONTINUATION: {
        this.appendFragment(source, at, end);
        if ((flags & FLAG.END_HEADERS) === 0) return;
        const blockLength = this.blockLength;
        const stream = this.blockStream;
        const endStream = this.blockEndStream;
        const dependsOn = this.blockDependsOn;
        this.inBlock = false;
        this.blockLength = 0;
        this.continuations = 0;
        return visitor.onHeaders(stream, this.block, 0, blockLength, endStream, dependsOn);
      }
      case FRAME.PRIORITY:
        return visitor.onPriority(streamId, source.readUInt32BE(at) & 0x7fffffff);
      case FRAME.RST_STREAM:
        return visitor.onRstStream(streamId, source.readUInt32BE(at));
      case FRAME.SETTINGS:
        if (flags & FLAG.ACK) return visitor.onSettingsAck();
        checkSettings(source, at, end);
        return visitor.onSettings(source.subarray(at, end));
      case FRAME.PING:
        return visitor.onPing(source.subarray(at, end), (flags & FLAG.ACK) !== 0);
      case FRAME.GOAWAY:
        return visitor.onGoaway(source.readUInt32BE(at) & 0x7fffffff, source.readUInt32BE(at + 4), source.subarray(at + 8, end));
      case FRAME.WINDOW_UPDATE:
        return visitor.onWindowUpdate(streamId, source.readUInt32BE(at) & 0x7fffffff);
    }
  }

  /** Between frames, with no header block under way: the header, scratch and block buffers are let go, so an idle connection holds none. */
  releaseIdle(): void {
    if (this.state !== HEADER || this.have !== 0 || this.inBlock) return;
    this.head = NO_ROOM;
    this.scratch = NO_ROOM;
    this.block = NO_ROOM;
  }

  /** Joins a header block fragment to the block under way (one copy, only for blocks that span frames). */
  private appendFragment(source: Buffer, from: number, end: number): void {
    const needed = this.blockLength + (end - from);
    if (needed > this.block.length) {
      const grown = Buffer.allocUnsafe(Math.max(needed, this.block.length * 2, 4096));
      this.block.copy(grown, 0, 0, this.blockLength);
      this.block = grown;
    }
    source.copy(this.block, this.blockLength, from, end);
    this.blockLength = needed;
  }
}
