// The HPACK decoder (RFC 7541 §6): a header block to a flat [name, value, ...] list, its dynamic table kept in sync even when the list is refused.
import { compressionError } from "./codec-error.js";
import { DynamicTable } from "./hpack-dynamic-table.js";
import { huffmanDecode, huffmanDecodedBound } from "./hpack-huffman-decode.js";
import { STATIC_TABLE, STATIC_TABLE_LENGTH } from "./hpack-static-table.js";
import "./latin1-buffer.js";

/** What `decode` returns when the block was valid; an invalid block throws a COMPRESSION_ERROR `CodecError`. */
export const DECODED = {
  /** The whole list is in `fields`. */
  OK: 0,
  /**
   * The list passed `maxHeaderListSize` (RFC 9113 §6.5.2): `fields` holds a prefix only. The table
   * is in sync, so the connection goes on; the stream gets a stream error (nghttp2 answers 431
   * or RST_STREAM).
   */
  LIST_TOO_LARGE: 1,
} as const;

/** The limits a decoder enforces. */
export interface HpackDecoderOptions {
  /** The list's cap, counted as 32 + name + value octets per field, while decoding (default 16 KiB). */
  readonly maxHeaderListSize?: number;
  /** A name or value whose encoded length passes this is a COMPRESSION_ERROR (default 64 KiB, as nghttp2). */
  readonly maxStringLength?: number;
}

/** An integer that needs more continuation octets than this is overlong: 5 carry 2^32 - 1. */
const MAX_CONTINUATION_OCTETS = 5;
const MAX_INTEGER = 0xffffffff;
const DEFAULT_TABLE_SIZE = 4096;
const NO_ROOM = Buffer.alloc(0);

/**
 * One per connection and direction. `decode` takes one complete header block (HEADERS plus its
 * CONTINUATIONs, joined) at a time, and must see every block of the connection, refused or not.
 */
export class HpackDecoder {
  /** Positions in `fields` (of the name) of the last block's never-indexed literals: a relay must forward them as such (RFC 7541 §7.1.3). */
  readonly neverIndexed: number[] = [];
  private readonly table = new DynamicTable(DEFAULT_TABLE_SIZE);
  private readonly maxListSize: number;
  private readonly maxStringLength: number;
  /** Our SETTINGS_HEADER_TABLE_SIZE as the peer acknowledged it: no size update may pass it. */
  private settingsMax = DEFAULT_TABLE_SIZE;
  /** The setting went below the table's size: the next block must start with a size update (RFC 7541 §4.2). */
  private updateRequired = false;
  private scratch = Buffer.allocUnsafe(1024);
  /** The block being decoded and the read position in it: fields, not locals, so integer reads return one number. */
  private block: Buffer = this.scratch;
  private pos = 0;
  private end = 0;

  constructor(options: HpackDecoderOptions = {}) {
    this.maxListSize = options.maxHeaderListSize ?? 16384;
    this.maxStringLength = options.maxStringLength ?? 65536;
  }

  /** Between blocks: the Huffman scratch is let go (the dynamic table stays: the peer's next block refers to it). */
  releaseIdle(): void {
    this.scratch = this.block = NO_ROOM;
  }

  /** The dynamic table's current size and maximum, for tests and diagnostics. */
  get tableSize(): { readonly size: number; readonly maxSize: number; readonly length: number } {
    return { size: this.table.size, maxSize: this.table.maxSize, length: this.table.length };
  }

  /** Applies our SETTINGS_HEADER_TABLE_SIZE once the peer has acknowledged it (between blocks). */
  setMaxTableSize(settingValue: number): void {
    this.settingsMax = settingValue;
    if (this.table.maxSize > settingValue) this.updateRequired = true;
  }

  /**
   * Decodes `block[start, end)` into `fields` (written over: on return it holds this block's list only) as name, value, name, value, ...
   * Returns a `DECODED` value; throws a COMPRESSION_ERROR `CodecError` for an invalid block, after
   * which the connection's HPACK state is unusable.
   */
  decode(block: Buffer, start: number, end: number, fields: string[]): number {
    // The list is written over from its start and cut to length at the end, never emptied first:
    // an array's length set to 0 drops its backing store, and the pushes after it took a new one
    // for every block (0.4 KB a gRPC call, bench/grpc-profile.mjs --heap).
    let count = 0;
    if (this.neverIndexed.length !== 0) this.neverIndexed.length = 0;
    this.block = block;
    this.pos = start;
    this.end = end;
    let listSize = 0;
    let tooLarge = false;
    let atStart = true;
    const table = this.table;
    while (this.pos < end) {
      const first = block[this.pos] as number;
      if (first & 0x80) {
        // Indexed field (§6.1): strings already made, nothing allocated.
        const index = this.readInteger(7);
        if (index === 0) throw compressionError("HPACK: indexed field with index 0");
        if (atStart && this.updateRequired) throw compressionError("HPACK: the block does not start with the size update a smaller setting requires");
        const name = this.nameAt(index);
        const value = index <= STATIC_TABLE_LENGTH ? (STATIC_TABLE[index - 1] as readonly [string, string])[1] : table.valueAt(index - STATIC_TABLE_LENGTH - 1);
        atStart = false;
        listSize += 32 + name.length + value.length;
        if (listSize > this.maxListSize) tooLarge = true;
        if (!tooLarge) {
          fields[count++] = name;
          fields[count++] = value;
        }
        continue;
      }
      if ((first & 0xe0) === 0x20) {
        // Dynamic table size update (§6.3): only before the block's first field, and within our setting.
        if (!atStart) throw compressionError("HPACK: dynamic table size update after a field");
        const size = this.readInteger(5);
        if (size > this.settingsMax) throw compressionError(`HPACK: table size update to ${size} passes the setting ${this.settingsMax}`);
        table.resize(size);
        this.updateRequired = false;
        continue;
      }
      if (atStart && this.updateRequired) throw compressionError("HPACK: the block does not start with the size update a smaller setting requires");
      atStart = false;
      // A literal (§6.2): with incremental indexing (01), without (0000) or never indexed (0001).
      const indexing = (first & 0xc0) === 0x40;
      const nameIndex = this.readInteger(indexing ? 6 : 4);
      let name: string | undefined;
      let nameLength: number;
      let nameFrom = 0;
      let nameHuffman = false;
      if (nameIndex !== 0) {
        name = this.nameAt(nameIndex);
        nameLength = name.length;
      } else {
        nameHuffman = ((block[this.pos] ?? 0) & 0x80) !== 0;
        nameLength = this.readStringInto(0);
        nameFrom = this.stringFrom;
      }
      const valueHuffman = ((block[this.pos] ?? 0) & 0x80) !== 0;
      const valueLength = this.readStringInto(nameHuffman ? nameLength : 0);
      const valueFrom = this.stringFrom;
      // Counted before any string is made: a refused list costs no allocation past this point.
      listSize += 32 + nameLength + valueLength;
      if (listSize > this.maxListSize) tooLarge = true;
      if (!indexing && tooLarge) continue;
      const nameSource = nameHuffman ? this.scratch : block;
      const valueSource = valueHuffman ? this.scratch : block;
      name ??= latin1String(nameSource, nameFrom, nameLength);
      const value = latin1String(valueSource, valueFrom, valueLength);
      if (indexing) table.add(name, value);
      if (tooLarge) continue;
      if (first & 0x10 && !indexing) this.neverIndexed.push(count);
      fields[count++] = name;
      fields[count++] = value;
    }
    // Setting an array's length is a call into the runtime: skipped when it is already right.
    if (fields.length !== count) fields.length = count;
    if (atStart && this.updateRequired) throw compressionError("HPACK: the block does not start with the size update a smaller setting requires");
    return tooLarge ? DECODED.LIST_TOO_LARGE : DECODED.OK;
  }

  /** Where the last string read begins: in the block for a raw string, in the scratch for a Huffman one. */
  private stringFrom = 0;

  /**
   * Reads a string literal (§5.2). A raw one stays in the block (`stringFrom` is its offset); a
   * Huffman one is decoded into the scratch at `scratchAt`. Returns the string's octet length.
   */
  private readStringInto(scratchAt: number): number {
    if (this.pos >= this.end) throw compressionError("HPACK: block ends before a string");
    const huffman = ((this.block[this.pos] as number) & 0x80) !== 0;
    const length = this.readInteger(7);
    if (length > this.maxStringLength) throw compressionError(`HPACK: a string of ${length} octets passes the limit ${this.maxStringLength}`);
    if (length > this.end - this.pos) throw compressionError("HPACK: block ends inside a string");
    const from = this.pos;
    this.pos += length;
    if (!huffman) {
      this.stringFrom = from;
      return length;
    }
    const bound = scratchAt + huffmanDecodedBound(length);
    if (bound > this.scratch.length) {
      const grown = Buffer.allocUnsafe(Math.max(bound, this.scratch.length * 2));
      this.scratch.copy(grown, 0, 0, scratchAt);
      this.scratch = grown;
    }
    const decoded = huffmanDecode(this.block, from, from + length, this.scratch, scratchAt);
    if (decoded < 0) throw compressionError("HPACK: invalid Huffman string (EOS, or bad padding)");
    this.stringFrom = scratchAt;
    return decoded;
  }

  /** Reads an integer with an N-bit prefix (§5.1); overlong, overflowing or cut-off integers are COMPRESSION_ERRORs. */
  private readInteger(prefixBits: number): number {
    const mask = (1 << prefixBits) - 1;
    let value = (this.block[this.pos++] as number) & mask;
    if (value < mask) return value;
    let factor = 1;
    for (let octets = 1; ; octets++) {
      if (this.pos >= this.end) throw compressionError("HPACK: block ends inside an integer");
      if (octets > MAX_CONTINUATION_OCTETS) throw compressionError("HPACK: overlong integer");
      const octet = this.block[this.pos++] as number;
      value += (octet & 0x7f) * factor;
      if (value > MAX_INTEGER) throw compressionError("HPACK: integer overflow");
      if ((octet & 0x80) === 0) return value;
      factor *= 128;
    }
  }

  private nameAt(index: number): string {
    if (index <= STATIC_TABLE_LENGTH) return (STATIC_TABLE[index - 1] as readonly [string, string])[0];
    const dynamic = index - STATIC_TABLE_LENGTH - 1;
    if (dynamic >= this.table.length) throw compressionError(`HPACK: index ${index} is past the table`);
    return this.table.nameAt(dynamic);
  }
}

/**
 * `source[from, from + length)` as a string. Short ones, the usual values (`GET`, `200`, a
 * grpc-timeout), are made with a fixed-arity `String.fromCharCode`: several times cheaper than the
 * call into C++ that `latin1Slice` is, which pays off from about 12 octets on.
 */
function latin1String(source: Buffer, from: number, length: number): string {
  const b = source;
  const i = from;
  switch (length) {
    case 0:
      return "";
    case 1:
      return String.fromCharCode(b[i] as number);
    case 2:
      return String.fromCharCode(b[i] as number, b[i + 1] as number);
    case 3:
      return String.fromCharCode(b[i] as number, b[i + 1] as number, b[i + 2] as number);
    case 4:
      return String.fromCharCode(b[i] as number, b[i + 1] as number, b[i + 2] as number, b[i + 3] as number);
    case 5:
      return String.fromCharCode(b[i] as number, b[i + 1] as number, b[i + 2] as number, b[i + 3] as number, b[i + 4] as number);
    case 6:
      return String.fromCharCode(b[i] as number, b[i + 1] as number, b[i + 2] as number, b[i + 3] as number, b[i + 4] as number, b[i + 5] as number);
    case 7:
      return String.fromCharCode(b[i] as number, b[i + 1] as number, b[i + 2] as number, b[i + 3] as number, b[i + 4] as number, b[i + 5] as number, b[i + 6] as number);
    case 8:
      return String.fromCharCode(b[i] as number, b[i + 1] as number, b[i + 2] as number, b[i + 3] as number, b[i + 4] as number, b[i + 5] as number, b[i + 6] as number, b[i + 7] as number);
    default:
      return source.latin1Slice(from, from + length);
  }
}
