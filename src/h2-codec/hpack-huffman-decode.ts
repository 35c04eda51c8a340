// HPACK Huffman decoding (RFC 7541 §5.2) as a 4-bit state machine built once at load from Appendix B's code table.
import { HUFFMAN_CODES, HUFFMAN_EOS, HUFFMAN_LENGTHS } from "./hpack-huffman-code.js";

/*
 * The code is a complete prefix code over 257 symbols, so its tree has 256 inner nodes: each is a
 * state. From every state, each of the 16 nibbles leads to one next state and emits at most one
 * symbol (the shortest code is 5 bits). A table of 256 x 16 transitions, one Uint32 each:
 * bits 0-7 the next state, 8-15 the symbol, then the flags below. Decoding is then one table read
 * per nibble with no branching on bits, the way nghttp2 and HAProxy decode.
 */
const EMIT = 0x10000;
const FAIL = 0x20000;
/** The next state is a valid place to stop: the bits since the last symbol are at most 7 ones. */
const ACCEPT = 0x40000;

function buildTransitions(): Uint32Array {
  // The tree: per inner node, its two children; a child >= 0 is an inner node, < 0 is ~symbol.
  const zero = new Int32Array(256);
  const one = new Int32Array(256);
  const depth = new Uint8Array(256);
  const allOnes = new Uint8Array(256);
  allOnes[0] = 1;
  let nodes = 1;
  for (let symbol = 0; symbol <= HUFFMAN_EOS; symbol++) {
    const code = HUFFMAN_CODES[symbol] as number;
    const length = HUFFMAN_LENGTHS[symbol] as number;
    let node = 0;
    for (let bit = length - 1; bit >= 0; bit--) {
      const branch = (code >>> bit) & 1 ? one : zero;
      if (bit === 0) {
        branch[node] = ~symbol;
        break;
      }
      let next = branch[node] as number;
      if (next === 0) {
        next = nodes++;
        branch[node] = next;
        depth[next] = (depth[node] as number) + 1;
        allOnes[next] = allOnes[node] === 1 && branch === one ? 1 : 0;
      }
      node = next;
    }
  }
  if (nodes !== 256) throw new Error(`the Huffman code is not complete: ${nodes} inner nodes`);
  const transitions = new Uint32Array(256 * 16);
  for (let state = 0; state < 256; state++) {
    for (let nibble = 0; nibble < 16; nibble++) {
      let node = state;
      let entry = 0;
      for (let bit = 3; bit >= 0; bit--) {
        const child = ((nibble >>> bit) & 1 ? one : zero)[node] as number;
        if (child >= 0) {
          node = child;
          continue;
        }
        const symbol = ~child;
        if (symbol === HUFFMAN_EOS) {
          entry = FAIL;
          break;
        }
        entry = EMIT | (symbol << 8);
        node = 0;
      }
      if (entry !== FAIL) {
        if (allOnes[node] === 1 && (depth[node] as number) <= 7) entry |= ACCEPT;
        transitions[state * 16 + nibble] = entry | node;
      } else {
        transitions[state * 16 + nibble] = FAIL;
      }
    }
  }
  return transitions;
}

const TRANSITIONS = buildTransitions();

/** The most octets `length` Huffman-coded octets can decode to (5 bits per symbol at best). */
export const huffmanDecodedBound = (length: number) => Math.ceil((length * 8) / 5);

/**
 * Decodes `src[start, end)` into `out` from offset `at` (room for `huffmanDecodedBound(end -
 * start)` octets is the caller's) and returns the decoded length, or -1 when the string is
 * invalid: it holds EOS, or ends in padding longer than 7 bits or not all ones (a
 * COMPRESSION_ERROR for the caller).
 */
export function huffmanDecode(src: Uint8Array, start: number, end: number, out: Uint8Array, at: number): number {
  let state = 0;
  let accept = ACCEPT;
  let length = at;
  for (let i = start; i < end; i++) {
    const octet = src[i] as number;
    let entry = TRANSITIONS[(state << 4) | (octet >>> 4)] as number;
    if (entry & FAIL) return -1;
    if (entry & EMIT) out[length++] = (entry >>> 8) & 0xff;
    entry = TRANSITIONS[((entry & 0xff) << 4) | (octet & 0x0f)] as number;
    if (entry & FAIL) return -1;
    if (entry & EMIT) out[length++] = (entry >>> 8) & 0xff;
    state = entry & 0xff;
    accept = entry & ACCEPT;
  }
  return accept === 0 ? -1 : length - at;
}
