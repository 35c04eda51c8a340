// A growable output buffer: the one place a connection's frames (or an HPACK block) are written before a single socket write.
import "./latin1-buffer.js";

/**
 * Bytes written at `length` into `buffer`, which is replaced by a larger copy when `reserve` asks
 * for more room than is left. Kept per connection and reused after each flush, so small frames
 * cost no allocation.
 */
export class ByteBuffer {
  buffer: Buffer;
  length = 0;

  constructor(initialSize = 16384) {
    this.buffer = Buffer.allocUnsafe(initialSize);
  }

  /** Makes room for `extra` more octets at `length`. */
  reserve(extra: number): void {
    const needed = this.length + extra;
    if (needed <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(needed, this.buffer.length * 2));
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
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
