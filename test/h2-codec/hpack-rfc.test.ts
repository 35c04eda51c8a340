// RFC 7541 Appendix C through our encoder and decoder, byte for byte both ways, with the dynamic table's size after each block.
import t from "tap";
import { ByteBuffer } from "../../src/h2-codec/byte-buffer.js";
import { DECODED, HpackDecoder } from "../../src/h2-codec/hpack-decoder.js";
import { HpackEncoder } from "../../src/h2-codec/hpack-encoder.js";
import { EXAMPLE_FIELDS, EXAMPLE_SEQUENCES } from "./hpack-rfc-examples.js";

/** The size update announcing a 256-octet table (31 + 225 as an integer with a 5-bit prefix): the examples assume both sides start there. */
const UPDATE_TO_256 = "3fe101";

for (const sequence of EXAMPLE_SEQUENCES) {
  t.test(`${sequence.name}: decoded`, async (t) => {
    const decoder = new HpackDecoder();
    if (sequence.tableMax !== 4096) decoder.setMaxTableSize(sequence.tableMax);
    const fields: string[] = [];
    sequence.blocks.forEach((block, i) => {
      const hex = (i === 0 && sequence.tableMax !== 4096 ? UPDATE_TO_256 : "") + block.hex;
      const bytes = Buffer.from(hex, "hex");
      t.equal(decoder.decode(bytes, 0, bytes.length, fields), DECODED.OK, `block ${i + 1} decodes`);
      t.strictSame(fields, block.fields, `block ${i + 1}'s list`);
      t.equal(decoder.tableSize.size, block.tableSize, `table size after block ${i + 1}`);
    });
  });

  t.test(`${sequence.name}: encoded`, async (t) => {
    // The examples index every literal; nghttp2's list of never-indexed names is ours otherwise.
    const encoder = new HpackEncoder({ huffman: sequence.huffman, notIndexed: new Set() });
    if (sequence.tableMax !== 4096) encoder.setPeerMaxTableSize(sequence.tableMax);
    sequence.blocks.forEach((block, i) => {
      const out = new ByteBuffer(16);
      encoder.encode(block.fields, out);
      const expected = (i === 0 && sequence.tableMax !== 4096 ? UPDATE_TO_256 : "") + (block.ourHex ?? block.hex);
      t.equal(out.buffer.subarray(0, out.length).toString("hex"), expected, `block ${i + 1}'s bytes`);
      t.equal(encoder.tableSize.size, block.tableSize, `table size after block ${i + 1}`);
    });
  });
}

for (const example of EXAMPLE_FIELDS) {
  t.test(example.name, async (t) => {
    const decoder = new HpackDecoder();
    const bytes = Buffer.from(example.hex, "hex");
    const fields: string[] = [];
    t.equal(decoder.decode(bytes, 0, bytes.length, fields), DECODED.OK);
    t.strictSame(fields, example.fields);
    t.strictSame(decoder.neverIndexed, example.neverIndexed);
    t.equal(decoder.tableSize.size, example.tableSize);
    if (example.name.includes("never indexed")) {
      const out = new ByteBuffer(4);
      new HpackEncoder({ huffman: false }).encode(example.fields, out, example.neverIndexed);
      t.equal(out.buffer.subarray(0, out.length).toString("hex"), example.hex, "encoded never-indexed as the decoder reported it");
    }
  });
}
