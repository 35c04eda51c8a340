// A growable output buffer: the one place a connection's frames (or an HPACK block) are written before a single socket write.
import "./latin1-buffer.js";

/**
 * Bytes written at `length` into `buffer`. `take` hands out what was written since the last take
 * as a view and never writes over it again: when room runs out, a new buffer takes the untaken
 * bytes and the old one is left to the socket that may still hold it. So a connection writes
 * small frames with no allocation per frame and one per `initialSize` octets of output.
 */
export class ByteBuffer {
  buffer: Buffer;
  /** Where the untaken bytes begin. */
  start = 0;
  length = 0;

  constructor(private readonly initialSize = 16384) {
    this.buffer = Buffer.allocUnsafe(initialSize);
  }

  /** Makes room for `extra` more octets at `length` (positions below `start` are not kept). */
  reserve(extra: number): void {
    if (this.length + extra <= this.buffer.length) return;
    const kept = this.length - this.start;
    const grown = Buffer.allocUnsafe(Math.max(kept + extra, this.initialSize, kept * 2));
    this.buffer.copy(grown, 0, this.start, this.length);
    this.buffer = grown;
    this.start = 0;
    this.length = kept;
  }

  /** The bytes written since the last take (a view, never written again), or undefined when there are none. */
  take(): Buffer | undefined {
    if (this.length === this.start) return undefined;
    const taken = this.buffer.subarray(this.start, this.length);
    this.start = this.length;
    return taken;
  }

  /** Appends one octet (room already reserved). */
  pushByte(octet: number): void {
    this.buffer[this.length++] = octet;
  }

  /** Appends `text` as latin1 octets (room already reserved). */
  pushLatin1(text: string): void {
    this.length += this.buffer.latin1Write(text, this.length, text.length);
  }

  /** Appends a copy of `bytes`, reserving the room itself. */
  pushBytes(bytes: Uint8Array): void {
    this.reserve(bytes.length);
    this.buffer.set(bytes, this.length);
    this.length += bytes.length;
  }
}
