// fast-check generators for the HPACK differential fuzz: header lists of real and random fields, connections of blocks and table-size settings, block mutations.
import fc from "fast-check";

const COMMON_NAMES = [
  ":method", ":path", ":scheme", ":authority", ":status", "content-type", "content-length", "user-agent", "accept", "accept-encoding",
  "cookie", "set-cookie", "authorization", "etag", "location", "date", "cache-control", "te", "grpc-timeout", "grpc-status",
  "grpc-message", "x-request-id", "x-forwarded-for", "if-none-match", "age", "custom-key",
];
const COMMON_VALUES = ["GET", "POST", "/", "/index.html", "http", "https", "200", "404", "", "gzip, deflate", "trailers", "application/grpc", "0", "1S", "100m"];

/** Any octet string, as latin1 chars (the codec's representation). */
const octets = (maxLength: number) => fc.array(fc.integer({ min: 0, max: 255 }), { maxLength }).map((codes) => String.fromCharCode(...codes));
/** Text the way fields usually look: mostly printable ASCII, Huffman-friendly. */
const text = (maxLength: number) => fc.string({ unit: fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz0123456789-_./=;, ABCXYZ"), maxLength });

const fieldName = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...COMMON_NAMES) }, { weight: 2, arbitrary: text(24).filter((name) => name.length > 0) }, { weight: 1, arbitrary: octets(12) });
const fieldValue = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...COMMON_VALUES) }, { weight: 3, arbitrary: text(64) }, { weight: 1, arbitrary: octets(40) }, { weight: 1, arbitrary: text(400) });

/** A header list as the codec takes it: name, value, name, value, ... */
export const headerList = fc.array(fc.tuple(fieldName, fieldValue), { maxLength: 16 }).map((pairs) => pairs.flat());

/** One step of a connection's direction: a block (with the positions to send never-indexed), or a new SETTINGS_HEADER_TABLE_SIZE. */
export type Step = { readonly kind: "block"; readonly fields: string[]; readonly huffman: boolean; readonly never: number[] } | { readonly kind: "setting"; readonly size: number };

const block = fc
  .record({ fields: headerList, huffman: fc.boolean(), neverMask: fc.array(fc.boolean(), { maxLength: 16 }) })
  .map(({ fields, huffman, neverMask }): Step => ({ kind: "block", fields, huffman, never: neverMask.flatMap((never, i) => (never && i * 2 < fields.length ? [i * 2] : [])) }));
const setting = fc.constantFrom(0, 64, 100, 256, 1000, 4096, 8192).map((size): Step => ({ kind: "setting", size }));

/** A connection: mostly blocks, now and then a table-size setting. */
export const connection = fc.array(fc.oneof({ weight: 6, arbitrary: block }, { weight: 1, arbitrary: setting }), { minLength: 1, maxLength: 10 });

/** A change to one block's bytes. */
export type Mutation =
  | { readonly kind: "flip"; readonly at: number; readonly bit: number }
  | { readonly kind: "truncate"; readonly at: number }
  | { readonly kind: "insert"; readonly at: number; readonly bytes: number[] }
  | { readonly kind: "set"; readonly at: number; readonly value: number };

export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant("flip" as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ kind: fc.constant("truncate" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("insert" as const), at: fc.nat(), bytes: fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 6 }) }),
  fc.record({ kind: fc.constant("set" as const), at: fc.nat(), value: fc.constantFrom(0x00, 0x7f, 0x80, 0xff, 0x3f, 0x20, 0x10, 0x40) }),
);

/** `block` with `change` applied (positions taken modulo the length). */
export function mutate(block: Buffer, change: Mutation): Buffer {
  if (block.length === 0) return change.kind === "insert" ? Buffer.from(change.bytes) : block;
  const at = change.at % (block.length + (change.kind === "insert" ? 1 : 0));
  switch (change.kind) {
    case "flip": {
      const copy = Buffer.from(block);
      copy[at] = (copy[at] as number) ^ (1 << change.bit);
      return copy;
    }
    case "truncate":
      return block.subarray(0, at);
    case "insert":
      return Buffer.concat([block.subarray(0, at), Buffer.from(change.bytes), block.subarray(at)]);
    case "set": {
      const copy = Buffer.from(block);
      copy[at] = change.value;
      return copy;
    }
  }
}
