// Types for Buffer's latin1 fast paths, which @types/node leaves out: what `toString("latin1")` and `write(..., "latin1")` call after their encoding switch.

declare global {
  interface Buffer {
    /** The octets `[start, end)` as a one-char-per-octet string (node's `Buffer.prototype.latin1Slice`). */
    latin1Slice(start: number, end: number): string;
    /** Writes `text`'s chars as octets (each `& 0xff`) at `offset`, at most `length`; returns the octets written. */
    latin1Write(text: string, offset: number, length: number): number;
  }
}

export {};
