// The connection's stream table beside a Map: any sequence of sets and deletes (ids that collide on purpose included) leaves the same contents, and steady churn allocates no new table.
// STREAM_MAP_FUZZ_RUNS (default 500) in every test run, FUZZ_RUNS for `make fuzz`; replay a failure with STREAM_MAP_FUZZ_SEED and STREAM_MAP_FUZZ_PATH.
import fc from "fast-check";
import t from "tap";
import { StreamIdMap } from "../../src/h2-codec/stream-id-map.js";
import { fuzzSettings } from "../helpers/fuzz-settings.js";

const { runs, seed, options } = fuzzSettings("STREAM_MAP_FUZZ", { fixedSeed: 20261206, defaultRuns: 500 });

/** Ids that share home slots at every capacity up to 1,024 (multiples of 2,048 apart), mixed with neighbours and the largest id. */
const id = fc.oneof(
  fc.integer({ min: 1, max: 40 }),
  fc.integer({ min: 0, max: 20 }).map((k) => 1 + 2048 * k),
  fc.integer({ min: 0, max: 20 }).map((k) => 3 + 2048 * k),
  fc.constant(0x7fffffff),
);
const operation = fc.oneof(
  fc.record({ op: fc.constant("set" as const), id, value: fc.integer() }),
  fc.record({ op: fc.constant("delete" as const), id }),
);

t.test("the same contents as a Map after any sets and deletes", async (t) => {
  fc.assert(
    fc.property(fc.array(operation, { maxLength: 400 }), (operations) => {
      const table = new StreamIdMap<number>();
      const reference = new Map<number, number>();
      for (const step of operations) {
        if (step.op === "set") {
          table.set(step.id, step.value);
          reference.set(step.id, step.value);
        } else if (table.delete(step.id) !== reference.delete(step.id)) return false;
        if (table.size !== reference.size) return false;
      }
      for (const [key, value] of reference) if (table.get(key) !== value) return false;
      for (let key = 1; key <= 45; key++) if (table.get(key) !== reference.get(key)) return false;
      const ascending = [...reference.keys()].sort((a, b) => a - b).map((key) => reference.get(key));
      if (JSON.stringify([...table].sort((a, b) => a - b)) !== JSON.stringify([...reference.values()].sort((a, b) => a - b))) return false;
      return JSON.stringify(table.values()) === JSON.stringify(ascending);
    }),
    options,
  );
  t.pass(`${runs} sequences, seed ${seed}`);
});

t.test("values() is a copy: deleting while walking it misses nothing", async (t) => {
  const table = new StreamIdMap<string>();
  for (let streamId = 1; streamId <= 21; streamId += 2) table.set(streamId, `s${streamId}`);
  const seen: string[] = [];
  for (const value of table.values()) {
    seen.push(value);
    table.delete(Number(value.slice(1)));
  }
  t.equal(seen.length, 11);
  t.equal(table.size, 0);
});

t.test("a steady load of streams opening and closing keeps the table it grew to", async (t) => {
  const table = new StreamIdMap<object>();
  const open: number[] = [];
  let next = 1;
  let capacityAfterWarmUp = 0;
  for (let step = 0; step < 100_000; step++) {
    table.set(next, {});
    open.push(next);
    next += 2;
    if (open.length > 10 + (step % 7)) table.delete(open.shift()!);
    if (step === 100) capacityAfterWarmUp = table.capacity;
  }
  // At most 17 open at once: room for twice that, then no new table for the rest of the churn.
  t.equal(capacityAfterWarmUp, 64);
  t.equal(table.capacity, 64);
  t.equal(table.size, open.length);
  for (const streamId of open) t.ok(table.get(streamId) !== undefined, `stream ${streamId} found`);
  t.equal(table.get(next - 2 * open.length - 2), undefined, "a closed stream is gone");
});
