// Octets the relay holds for a peer (a body waiting for its app, pieces a paused stream has not handed on, a body kept for a resend), copied into one growing buffer: memory follows octets, never pieces.

/**
 * The first buffer's size: a gRPC message or a small form fits, and a stream holding a few
 * octets does not cost a 64 KiB block. Each growth doubles, so what is held costs at most twice
 * its octets, and each octet is copied about twice in all.
 */
const FIRST_CAPACITY = 1024;

const EMPTY = Buffer.alloc(0);

/**
 * One per stream or request while it holds anything. A piece is copied in whatever its size:
 * a piece the relay was handed is a view that keeps its whole socket read alive (a 1-octet DATA
 * frame kept as a view cost ~130 bytes of heap per octet), and even a piece of its own costs a
 * Buffer object of ~100 bytes. Only the octets are kept.
 */
export class HeldOctets {
  #buffer: Buffer | undefined;
  #length = 0;

  /** The octets held. */
  get length(): number {
    return this.#length;
  }

  /** Copies `chunk[start, end)` (all of it by default) in after what is held. */
  append(chunk: Buffer, start = 0, end = chunk.length): void {
    if (end <= start) return;
    const length = this.#length + (end - start);
    let buffer = this.#buffer;
    if (buffer === undefined || length > buffer.length) {
      const grown = Buffer.allocUnsafe(Math.max(length, FIRST_CAPACITY, (buffer?.length ?? 0) * 2));
      if (buffer !== undefined) buffer.copy(grown, 0, 0, this.#length);
      this.#buffer = buffer = grown;
    }
    chunk.copy(buffer, this.#length, start, end);
    this.#length = length;
  }

  /** Everything held, as one buffer that is the caller's (never written again here); nothing is held after. */
  take(): Buffer {
    const buffer = this.#buffer;
    const length = this.#length;
    this.#buffer = undefined;
    this.#length = 0;
    return buffer === undefined ? EMPTY : buffer.subarray(0, length);
  }
}
