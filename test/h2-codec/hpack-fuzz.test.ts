// HPACK against python3-hpack: our blocks decoded by it, its blocks decoded by us, and mutated blocks refused only with our typed error, tables never apart.
// HPACK_FUZZ_RUNS (default 300 per property) in every test run, FUZZ_RUNS / 10 for `make fuzz` (each case is a connection of up to 10 blocks); replay a failure with HPACK_FUZZ_SEED and HPACK_FUZZ_PATH.
import fc from "fast-check";
import t from "tap";
import { ByteBuffer } from "../../src/h2-codec/byte-buffer.js";
import { CodecError } from "../../src/h2-codec/codec-error.js";
import { DECODED, HpackDecoder } from "../../src/h2-codec/hpack-decoder.js";
import { HpackEncoder } from "../../src/h2-codec/hpack-encoder.js";
import { connection, mutate, mutation, type Step } from "./hpack-fuzz-lists.js";
import { HpackOracle, pythonHpack, type OracleDecoded } from "./hpack-oracle.js";
import { fuzzSettings } from "../helpers/fuzz-settings.js";

const { runs, seed, options } = fuzzSettings("HPACK_FUZZ", { fixedSeed: 20261206, defaultRuns: 300, fuzzShare: 10 });

/**
 * Where we refuse what python3-hpack takes, on purpose: caps it does not have (integers past
 * 2^32 - 1 or in more than five continuation octets, as nghttp2), and a size update owed after a
 * smaller setting, which it only checks at the block's end. Anything else it takes, we must take.
 */
const STRICTER = [/overlong integer/, /integer overflow/, /does not start with the size update/, /passes the limit/];

/**
 * Settings as python3-hpack can encode them. Its 4.0 encoder forgets an owed size update when the
 * same size is set twice (`resized` is recomputed against the last value), and it sends every
 * size set since the last block in order, where RFC 7541 §4.2 asks for the smallest and the last
 * (nghttp2 refuses "100, then 0" after a setting of 0 as we do). So a run of settings becomes its
 * last, left out when it repeats the size in force.
 */
function asPythonEncodes(steps: readonly Step[]): Step[] {
  let inForce = 4096;
  const kept: Step[] = [];
  steps.forEach((step, i) => {
    if (step.kind === "block") return kept.push(step);
    if (steps[i + 1]?.kind === "setting") return;
    if (step.size !== inForce) kept.push(step);
    inForce = step.size;
  });
  return kept;
}

/** Our decoder's verdict on one block: the list, or our typed error (anything else thrown fails the property). */
function decodeOurs(decoder: HpackDecoder, block: Buffer): { fields?: string[]; never?: number[]; error?: CodecError } {
  const fields: string[] = [];
  try {
    const result = decoder.decode(block, 0, block.length, fields);
    if (result !== DECODED.OK) throw new Error(`a list past the cap from ${block.length} octets`);
    return { fields, never: [...decoder.neverIndexed] };
  } catch (error) {
    if (error instanceof CodecError && error.code === "COMPRESSION_ERROR") return { error };
    throw error;
  }
}

/** Fails unless both verdicts agree: the same list, never-indexed marks and table size, or both refused (we may refuse more, as STRICTER says). */
function sameVerdict(ours: ReturnType<typeof decodeOurs>, theirs: OracleDecoded, decoder: HpackDecoder, where: string): boolean {
  if (theirs.error !== undefined) {
    if (ours.error === undefined) throw new Error(`${where}: python3-hpack refused (${theirs.error}) what we took: ${JSON.stringify(ours.fields)}`);
    return false;
  }
  if (ours.error !== undefined) {
    if (!STRICTER.some((rule) => rule.test(ours.error?.message ?? ""))) throw new Error(`${where}: we refused (${ours.error.message}) what python3-hpack took: ${JSON.stringify(theirs.fields)}`);
    return false;
  }
  if (JSON.stringify(ours.fields) !== JSON.stringify(theirs.fields)) throw new Error(`${where}: lists differ: ours ${JSON.stringify(ours.fields)}, python3-hpack ${JSON.stringify(theirs.fields)}`);
  if (JSON.stringify(ours.never) !== JSON.stringify(theirs.never)) throw new Error(`${where}: never-indexed marks differ: ours ${JSON.stringify(ours.never)}, python3-hpack ${JSON.stringify(theirs.never)}`);
  if (decoder.tableSize.size !== theirs.tableSize) throw new Error(`${where}: tables apart: ours ${decoder.tableSize.size}, python3-hpack ${String(theirs.tableSize)}`);
  return true;
}

const reference = pythonHpack();
if (reference.python === undefined) {
  t.test("HPACK against python3-hpack", { skip: reference.missing }, async () => {});
} else {
  const oracle = new HpackOracle(reference.python);
  t.teardown(() => oracle.stop());
  t.comment(`seed ${seed}, ${runs} runs per property`);

  t.test("our blocks, decoded by python3-hpack and by us, give the lists we encoded", async (t) => {
    await fc.assert(
      fc.asyncProperty(connection, async (steps: Step[]) => {
        const id = await oracle.open();
        const encoder = new HpackEncoder();
        const decoder = new HpackDecoder();
        const out = new ByteBuffer(256);
        try {
          for (const [i, step] of steps.entries()) {
            if (step.kind === "setting") {
              encoder.setPeerMaxTableSize(step.size);
              decoder.setMaxTableSize(step.size);
              await oracle.setting(id, step.size);
              continue;
            }
            out.length = 0;
            encoder.encode(step.fields, out, step.never);
            const block = Buffer.from(out.buffer.subarray(0, out.length));
            const ours = decodeOurs(decoder, block);
            if (JSON.stringify(ours.fields) !== JSON.stringify(step.fields)) throw new Error(`step ${i}: our own decoder read ${JSON.stringify(ours.fields)} ${ours.error?.message ?? ""}`);
            if (!step.never.every((at) => ours.never?.includes(at))) throw new Error(`step ${i}: a never-indexed field was not sent as one`);
            sameVerdict(ours, await oracle.decode(id, block), decoder, `step ${i}`);
            if (encoder.tableSize.size !== decoder.tableSize.size) throw new Error(`step ${i}: encoder and decoder tables apart`);
          }
        } finally {
          await oracle.close(id);
        }
      }),
      options,
    );
    t.pass("agreed");
  });

  t.test("python3-hpack's blocks decode to its lists, with or without a list cap", async (t) => {
    let refusals = 0;
    await fc.assert(
      fc.asyncProperty(connection, async (steps: Step[]) => {
        const id = await oracle.open();
        const decoder = new HpackDecoder({ maxHeaderListSize: 1 << 20 });
        // A decoder with a small list cap beside it: refused lists leave its table where the other's is.
        const capped = new HpackDecoder({ maxHeaderListSize: 300 });
        try {
          for (const [i, step] of asPythonEncodes(steps).entries()) {
            if (step.kind === "setting") {
              await oracle.peerSetting(id, step.size);
              decoder.setMaxTableSize(step.size);
              capped.setMaxTableSize(step.size);
              continue;
            }
            const { block, tableSize } = await oracle.encode(id, step.fields, step.huffman, step.never);
            const prefix: string[] = [];
            const verdict = capped.decode(block, 0, block.length, prefix);
            const ours = decodeOurs(decoder, block);
            if (verdict === DECODED.OK ? JSON.stringify(prefix) !== JSON.stringify(step.fields) : JSON.stringify(prefix) !== JSON.stringify(step.fields.slice(0, prefix.length)))
              throw new Error(`step ${i}: the capped decoder read ${JSON.stringify(prefix)} (${verdict})`);
            if (capped.tableSize.size !== tableSize) throw new Error(`step ${i}: a refused list moved the table apart: ${capped.tableSize.size}, python3-hpack's encoder ${tableSize}`);
            refusals += verdict === DECODED.LIST_TOO_LARGE ? 1 : 0;
            if (ours.error !== undefined) throw new Error(`step ${i}: we refused python3-hpack's block ${block.toString("hex")}: ${ours.error.message}`);
            if (JSON.stringify(ours.fields) !== JSON.stringify(step.fields)) throw new Error(`step ${i}: read ${JSON.stringify(ours.fields)}`);
            // python3-hpack sends a sensitive field that matches a table entry as indexed: marks are a subset.
            if (!(ours.never ?? []).every((at) => step.never.includes(at))) throw new Error(`step ${i}: never-indexed ${JSON.stringify(ours.never)}, sent ${JSON.stringify(step.never)}`);
            if (decoder.tableSize.size !== tableSize) throw new Error(`step ${i}: tables apart: ours ${decoder.tableSize.size}, python3-hpack's encoder ${tableSize}`);
          }
        } finally {
          await oracle.close(id);
        }
      }),
      options,
    );
    t.ok(refusals > 0, `the capped decoder refused ${refusals} lists and kept its table`);
  });

  t.test("a mutated block: our typed error or python3-hpack's verdict, and the tables stay together after it", async (t) => {
    const verdicts = new Map<string, number>();
    const count = (verdict: string) => verdicts.set(verdict, (verdicts.get(verdict) ?? 0) + 1);
    await fc.assert(
      fc.asyncProperty(connection, fc.nat(), mutation, async (steps: Step[], pick: number, change) => {
        const writer = await oracle.open();
        const reader = await oracle.open();
        const decoder = new HpackDecoder({ maxHeaderListSize: 1 << 20 });
        try {
          const blocks: Buffer[] = [];
          for (const step of asPythonEncodes(steps)) {
            if (step.kind === "setting") {
              await oracle.peerSetting(writer, step.size);
              await oracle.setting(reader, step.size);
              decoder.setMaxTableSize(step.size);
              continue;
            }
            blocks.push((await oracle.encode(writer, step.fields, step.huffman, step.never)).block);
          }
          // Settings are applied up front here: the reference's blocks carry the size updates; each reader takes them as it can.
          const target = pick % Math.max(blocks.length, 1);
          for (const [i, original] of blocks.entries()) {
            const block = i === target ? mutate(original, change) : original;
            const agreed = sameVerdict(decodeOurs(decoder, block), await oracle.decode(reader, block), decoder, `block ${i}${i === target ? " (mutated)" : ""}`);
            if (i === target) count(agreed ? "mutated, both took it" : "mutated, refused");
            if (!agreed) return;
          }
        } finally {
          await oracle.close(writer);
          await oracle.close(reader);
        }
      }),
      options,
    );
    t.comment(`verdicts: ${JSON.stringify(Object.fromEntries(verdicts))}`);
    t.ok((verdicts.get("mutated, refused") ?? 0) > 0, "some mutations were refused");
    t.ok((verdicts.get("mutated, both took it") ?? 0) > 0, "some mutations were taken by both");
  });
}
