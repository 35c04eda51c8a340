// HPACK Huffman encoding (RFC 7541 §5.2) of latin1 strings, and the encoded length the encoder compares against the raw one.
import { HUFFMAN_CODES, HUFFMAN_LENGTHS } from "./hpack-huffman-code.js";

const CODES = Uint32Array.from(HUFFMAN_CODES.slice(0, 256));
const LENGTHS = Uint8Array.from(HUFFMAN_LENGTHS.slice(0, 256));

/** The octets `text` (one octet per char, latin1) takes Huffman-coded, padding included. */
export function huffmanEncodedLength(text: string): number {
  let bits = 0;
  for (let i = 0; i < text.length; i++) bits += LENGTHS[text.charCodeAt(i) & 0xff] as number;
  return (bits + 7) >>> 3;
}

/**
 * Writes `text` Huffman-coded into `out` at `pos` (room for `huffmanEncodedLength(text)` octets
 * is the caller's) and returns the offset after it. Bits gather in a 32-bit accumulator that
 * never holds more than 7 pending bits between symbols; codes over 24 bits (rare control octets)
 * go in two parts so the accumulator never overflows.
 */
export function huffmanEncode(text: string, out: Uint8Array, pos: number): number {
  let pending = 0;
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const octet = text.charCodeAt(i) & 0xff;
    let code = CODES[octet] as number;
    let length = LENGTHS[octet] as number;
    if (length > 24) {
      const high = length - 16;
      pending = (pending << high) | (code >>> 16);
      count += high;
      while (count >= 8) out[pos++] = (pending >>> (count -= 8)) & 0xff;
      pending &= (1 << count) - 1;
      code &= 0xffff;
      length = 16;
    }
    pending = ((pending << length) | code) >>> 0;
    count += length;
    while (count >= 8) out[pos++] = (pending >>> (count -= 8)) & 0xff;
    pending &= (1 << count) - 1;
  }
  // Padding: the most significant bits of EOS, all ones (RFC 7541 §5.2).
  if (count > 0) out[pos++] = ((pending << (8 - count)) | (0xff >>> count)) & 0xff;
  return pos;
}
