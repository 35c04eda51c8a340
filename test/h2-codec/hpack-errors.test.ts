// The HPACK decoder's refusals, one per rule, each a COMPRESSION_ERROR CodecError; and a refused list that leaves the table in sync.
import t from "tap";
import { ByteBuffer } from "../../src/h2-codec/byte-buffer.js";
import { CodecError } from "../../src/h2-codec/codec-error.js";
import { DECODED, HpackDecoder, type HpackDecoderOptions } from "../../src/h2-codec/hpack-decoder.js";
import { HpackEncoder } from "../../src/h2-codec/hpack-encoder.js";

interface BadBlock {
  readonly name: string;
  readonly hex: string;
  readonly options?: HpackDecoderOptions;
  /** Our SETTINGS_HEADER_TABLE_SIZE, acknowledged before the block. */
  readonly setting?: number;
}

/** A literal with incremental indexing, name "a", then a Huffman value of the given octets. */
const huffmanValue = (hex: string) => `400161${(0x80 | (hex.length / 2)).toString(16)}${hex}`;

const BAD_BLOCKS: readonly BadBlock[] = [
  { name: "indexed field with index 0", hex: "80" },
  { name: "index past the static and an empty dynamic table", hex: "be" },
  { name: "literal name index past the table", hex: "7f0000" },
  { name: "overlong integer (six continuation octets)", hex: "ff808080808001" },
  { name: "integer overflowing 2^32 - 1", hex: "ffffffffff7f" },
  { name: "block ends inside an integer", hex: "ff80" },
  { name: "block ends before a value", hex: "400161" },
  { name: "block ends inside a string", hex: "40056162" },
  { name: "string longer than the limit", hex: "4005616263646500", options: { maxStringLength: 4 } },
  { name: "Huffman string holding EOS", hex: huffmanValue("ffffffff") },
  { name: "Huffman padding longer than 7 bits", hex: huffmanValue("1fff") },
  { name: "Huffman padding not all ones", hex: huffmanValue("18") },
  { name: "table size update after a field", hex: "823f" + "e101" },
  { name: "table size update past the setting", hex: "3fe21f" },
  { name: "no size update after the setting went below the table", hex: "82", setting: 100 },
  { name: "empty block where a size update is owed", hex: "", setting: 0 },
];

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
}

for (const bad of BAD_BLOCKS) {
  t.test(bad.name, async (t) => {
    const decoder = new HpackDecoder(bad.options);
    if (bad.setting !== undefined) decoder.setMaxTableSize(bad.setting);
    const bytes = Buffer.from(bad.hex, "hex");
    const error = thrown(() => decoder.decode(bytes, 0, bytes.length, []));
    t.ok(error instanceof CodecError, "a CodecError");
    t.match(error, { code: "COMPRESSION_ERROR", h2Code: 9 });
  });
}

t.test("a size update within a lowered setting is taken, and evicts", async (t) => {
  const decoder = new HpackDecoder();
  const first = Buffer.from("400161016201", "hex").subarray(0, 5); // a: b, indexed
  t.equal(decoder.decode(first, 0, first.length, []), DECODED.OK);
  t.equal(decoder.tableSize.length, 1);
  decoder.setMaxTableSize(100);
  const block = Buffer.from("3f4582", "hex"); // size update to 100, then :method GET
  const fields: string[] = [];
  t.equal(decoder.decode(block, 0, block.length, fields), DECODED.OK);
  t.strictSame(fields, [":method", "GET"]);
  t.equal(decoder.tableSize.maxSize, 100);
  const zero = Buffer.from("2082", "hex");
  decoder.setMaxTableSize(0);
  t.equal(decoder.decode(zero, 0, zero.length, fields), DECODED.OK);
  t.same(decoder.tableSize, { size: 0, maxSize: 0, length: 0 }, "a size update to 0 empties the table");
});

t.test("a list past the cap is refused without losing the table", async (t) => {
  const encoder = new HpackEncoder();
  const capped = new HpackDecoder({ maxHeaderListSize: 200 });
  const open = new HpackDecoder();
  const big = [":method", "GET", ":path", "/x", "x-one", "a".repeat(60), "x-two", "b".repeat(60), "x-three", "c".repeat(60)];
  const out = new ByteBuffer();
  encoder.encode(big, out);
  const fields: string[] = [];
  t.equal(capped.decode(out.buffer, 0, out.length, fields), DECODED.LIST_TOO_LARGE);
  t.ok(fields.length < big.length, "only a prefix is handed out");
  t.equal(open.decode(out.buffer, 0, out.length, []), DECODED.OK);
  t.same(capped.tableSize, open.tableSize, "the refused block still indexed its fields");
  // The next block refers to the entries the refused one added.
  const again = [":method", "GET", ":path", "/y", "x-three", "c".repeat(60)];
  out.length = 0;
  encoder.encode(again, out);
  t.ok(out.length < 12, "the next block indexes the refused one's entries");
  t.equal(capped.decode(out.buffer, 0, out.length, fields), DECODED.OK);
  t.strictSame(fields, again);
});

t.test("the list size counts 32 + name + value octets per field (RFC 9113 §6.5.2)", async (t) => {
  const block = Buffer.from("82", "hex"); // :method GET: 32 + 7 + 3 = 42
  t.equal(new HpackDecoder({ maxHeaderListSize: 42 }).decode(block, 0, 1, []), DECODED.OK);
  t.equal(new HpackDecoder({ maxHeaderListSize: 41 }).decode(block, 0, 1, []), DECODED.LIST_TOO_LARGE);
});

t.test("every octet survives Huffman coding, and the encoder picks the shorter form", async (t) => {
  const all = String.fromCharCode(...Array.from({ length: 256 }, (_, i) => i));
  const encoder = new HpackEncoder();
  const decoder = new HpackDecoder();
  const out = new ByteBuffer(8);
  const fields = ["x-all", all, "x-text", "hello world, this is text", "x-binary", "\u00ff\u00fe\u0001"];
  encoder.encode(fields, out);
  const decoded: string[] = [];
  t.equal(decoder.decode(out.buffer, 0, out.length, decoded), DECODED.OK);
  t.strictSame(decoded, fields);
});

t.test("the encoder announces a smaller peer table, the smallest first (RFC 7541 §4.2)", async (t) => {
  const encoder = new HpackEncoder();
  const decoder = new HpackDecoder();
  const out = new ByteBuffer();
  encoder.encode(["x-a", "1"], out);
  encoder.setPeerMaxTableSize(0);
  encoder.setPeerMaxTableSize(1000);
  decoder.decode(out.buffer, 0, out.length, []);
  decoder.setMaxTableSize(1000);
  out.length = 0;
  encoder.encode(["x-a", "1"], out);
  t.equal(out.buffer.subarray(0, 4).toString("hex"), "203fc907", "size update to 0, then to 1000");
  const fields: string[] = [];
  t.equal(decoder.decode(out.buffer, 0, out.length, fields), DECODED.OK);
  t.strictSame(fields, ["x-a", "1"]);
  t.same(decoder.tableSize, encoder.tableSize);
});

t.test("nghttp2's indexing choices", async (t) => {
  const decoder = new HpackDecoder();
  const encoder = new HpackEncoder();
  const out = new ByteBuffer();
  const fields = [":path", "/a", "content-length", "5", "etag", '"x"', "set-cookie", "a=b", "authorization", "Basic eDp5", "cookie", "a=b", "x-kept", "v"];
  encoder.encode(fields, out);
  t.equal(decoder.decode(out.buffer, 0, out.length, []), DECODED.OK);
  t.strictSame(decoder.neverIndexed, [8, 10], "authorization and a short cookie go never-indexed");
  t.equal(encoder.tableSize.length, 1, "only x-kept was indexed");
  t.equal(decoder.tableSize.length, 1);
});
