// The HPACK encoder (RFC 7541 §6): a flat [name, value, ...] list to a header block, indexing what nghttp2 indexes.
import type { ByteBuffer } from "./byte-buffer.js";
import { DynamicTable, ENTRY_OVERHEAD, type EvictionListener } from "./hpack-dynamic-table.js";
import { huffmanEncode, huffmanEncodedLength } from "./hpack-huffman-encode.js";
import { STATIC_LOOKUP, STATIC_TABLE_LENGTH } from "./hpack-static-table.js";

/**
 * Fields never added to the table, as nghttp2's `hd_deflate_decide_indexing`: their values change
 * from message to message and would only churn the table.
 */
const NOT_INDEXED = new Set([":path", "age", "content-length", "etag", "if-modified-since", "if-none-match", "location", "set-cookie"]);

/** How a name may be indexed. */
const INDEX = 0;
const NOT_INDEX = 1;
/** nghttp2 (after Firefox) sends these never-indexed: low-entropy secrets an attacker could probe for (RFC 7541 §7.1.3). */
const NEVER = 2;
/** `cookie`: never-indexed when its value is shorter than 20 octets (nghttp2's rule). */
const NEVER_WHEN_SHORT = 3;

/** What is fixed about a name: its static entries and its indexing policy (one Map lookup per field finds all of it). */
interface NameFacts {
  readonly staticIndex: number;
  readonly staticValues: ReadonlyMap<string, number> | undefined;
  readonly policy: number;
}

function buildFacts(notIndexed: ReadonlySet<string>): ReadonlyMap<string, NameFacts> {
  const facts = new Map<string, NameFacts>();
  const policyOf = (name: string) => (name === "authorization" ? NEVER : name === "cookie" ? NEVER_WHEN_SHORT : notIndexed.has(name) ? NOT_INDEX : INDEX);
  for (const [name, entry] of STATIC_LOOKUP) facts.set(name, { staticIndex: entry.index, staticValues: entry.values, policy: policyOf(name) });
  for (const name of notIndexed) if (!facts.has(name)) facts.set(name, { staticIndex: 0, staticValues: undefined, policy: NOT_INDEX });
  return facts;
}

const DEFAULT_FACTS = buildFacts(NOT_INDEXED);

/** A name in the encoder's dynamic table: the newest entry with it, and the newest with each value. */
interface DynamicName {
  sequence: number;
  readonly values: Map<string, number>;
}

/** The encoder's own limits and choices. */
export interface HpackEncoderOptions {
  /** The most table the encoder keeps, whatever the peer allows (default 4,096, the protocol's initial size). */
  readonly maxTableSize?: number;
  /** Huffman-code strings where that is shorter (default true; false reproduces RFC 7541 C.3 and C.5). */
  readonly huffman?: boolean;
  /** Names never added to the table (default nghttp2's list; empty reproduces RFC 7541 C.5, which indexes `location`). */
  readonly notIndexed?: ReadonlySet<string>;
}

const DEFAULT_TABLE_SIZE = 4096;

/** One per connection and direction; every block it makes must be sent, in order, or the peer's table desynchronises. */
export class HpackEncoder implements EvictionListener {
  private readonly ownMax: number;
  private readonly huffman: boolean;
  private readonly facts: ReadonlyMap<string, NameFacts>;
  private readonly names = new Map<string, DynamicName>();
  private readonly table: DynamicTable;
  /** A size update is owed at the start of the next block. */
  private updatePending: boolean;
  /** The smallest size the table went to since the last block: sent first if below the final one (RFC 7541 §4.2). */
  private smallestSince = Number.MAX_SAFE_INTEGER;

  constructor(options: HpackEncoderOptions = {}) {
    this.ownMax = options.maxTableSize ?? DEFAULT_TABLE_SIZE;
    this.huffman = options.huffman ?? true;
    this.facts = options.notIndexed === undefined ? DEFAULT_FACTS : buildFacts(options.notIndexed);
    const initial = Math.min(this.ownMax, DEFAULT_TABLE_SIZE);
    this.table = new DynamicTable(initial, this);
    // A table smaller than the protocol's initial 4,096 has to be announced before the first field.
    this.updatePending = initial < DEFAULT_TABLE_SIZE;
  }

  /** The dynamic table's current size and maximum, for tests and diagnostics. */
  get tableSize(): { readonly size: number; readonly maxSize: number; readonly length: number } {
    return { size: this.table.size, maxSize: this.table.maxSize, length: this.table.length };
  }

  /** Applies the peer's SETTINGS_HEADER_TABLE_SIZE: the table shrinks now, the size update goes at the start of the next block. */
  setPeerMaxTableSize(settingValue: number): void {
    const size = Math.min(settingValue, this.ownMax);
    this.table.resize(size);
    this.smallestSince = Math.min(this.smallestSince, size);
    this.updatePending = true;
  }

  /**
   * Appends the block for `fields` (lowercase names, latin1 strings) to `out`. `neverIndexed`
   * lists, in rising order, the positions in `fields` of names to send never-indexed (what the
   * decoder reported for a relayed block).
   */
  encode(fields: readonly string[], out: ByteBuffer, neverIndexed?: readonly number[]): void {
    if (this.updatePending) this.writeSizeUpdates(out);
    let sensitiveAt = 0;
    for (let i = 0; i + 1 < fields.length; i += 2) {
      const name = fields[i] as string;
      const value = fields[i + 1] as string;
      let never = false;
      if (neverIndexed !== undefined && neverIndexed[sensitiveAt] === i) {
        never = true;
        sensitiveAt++;
      }
      this.encodeField(name, value, never, out);
    }
  }

  private encodeField(name: string, value: string, sensitive: boolean, out: ByteBuffer): void {
    const facts = this.facts.get(name);
    const policy = facts === undefined ? INDEX : facts.policy;
    // Names we never index are never in our dynamic table: no lookup there.
    const dynamic = (policy === NOT_INDEX || policy === NEVER) && facts !== undefined && facts.staticIndex > 0 ? undefined : this.names.get(name);
    const never = sensitive || policy === NEVER || (policy === NEVER_WHEN_SHORT && value.length < 20);
    if (!never) {
      const sequence = dynamic?.values.get(value);
      if (sequence !== undefined) return writeInteger(out, this.indexOf(sequence), 7, 0x80);
      const staticIndex = facts?.staticValues?.get(value);
      if (staticIndex !== undefined) return writeInteger(out, staticIndex, 7, 0x80);
    }
    const nameIndex = facts !== undefined && facts.staticIndex > 0 ? facts.staticIndex : dynamic !== undefined ? this.indexOf(dynamic.sequence) : 0;
    const indexing = (policy === INDEX || policy === NEVER_WHEN_SHORT) && !never && ENTRY_OVERHEAD + name.length + value.length <= (this.table.maxSize * 3) / 4;
    if (indexing) writeInteger(out, nameIndex, 6, 0x40);
    else writeInteger(out, nameIndex, 4, never ? 0x10 : 0x00);
    if (nameIndex === 0) writeString(out, name, this.huffman);
    writeString(out, value, this.huffman);
    if (indexing) this.remember(name, value);
  }

  /** The HPACK index of the entry with `sequence`: the newest is 62. */
  private indexOf(sequence: number): number {
    return STATIC_TABLE_LENGTH + this.table.nextSequence - sequence;
  }

  private remember(name: string, value: string): void {
    const before = this.table.nextSequence;
    this.table.add(name, value);
    if (this.table.nextSequence === before) return;
    let entry = this.names.get(name);
    if (entry === undefined) this.names.set(name, (entry = { sequence: before, values: new Map() }));
    entry.sequence = before;
    entry.values.set(value, before);
  }

  /** The table's (EvictionListener): drops an evicted entry from the lookup where it was the newest for its name or value. */
  evicted(name: string, value: string, sequence: number): void {
    const entry = this.names.get(name);
    if (entry === undefined) return;
    if (entry.values.get(value) === sequence) entry.values.delete(value);
    // Eviction is oldest first: if the newest with this name goes, none is left.
    if (entry.sequence === sequence) this.names.delete(name);
  }

  private writeSizeUpdates(out: ByteBuffer): void {
    const size = this.table.maxSize;
    if (this.smallestSince < size) writeInteger(out, this.smallestSince, 5, 0x20);
    writeInteger(out, size, 5, 0x20);
    this.updatePending = false;
    this.smallestSince = Number.MAX_SAFE_INTEGER;
  }
}

/** Writes an integer with an N-bit prefix (RFC 7541 §5.1), `flags` in the first octet's high bits. */
function writeInteger(out: ByteBuffer, value: number, prefixBits: number, flags: number): void {
  out.reserve(6);
  const mask = (1 << prefixBits) - 1;
  if (value < mask) {
    out.pushByte(flags | value);
    return;
  }
  out.pushByte(flags | mask);
  value -= mask;
  while (value >= 128) {
    out.pushByte((value % 128) | 0x80);
    value = Math.floor(value / 128);
  }
  out.pushByte(value);
}

/** Writes a string literal (RFC 7541 §5.2), Huffman-coded when that is shorter (as nghttp2 chooses). */
function writeString(out: ByteBuffer, text: string, huffman: boolean): void {
  const huffmanLength = huffman ? huffmanEncodedLength(text) : text.length;
  if (huffmanLength < text.length) {
    writeInteger(out, huffmanLength, 7, 0x80);
    out.reserve(huffmanLength);
    out.length = huffmanEncode(text, out.buffer, out.length);
  } else {
    writeInteger(out, text.length, 7, 0x00);
    out.reserve(text.length);
    out.pushLatin1(text);
  }
}
