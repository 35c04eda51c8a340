// The memory give-back: one memory-reducing gc() per burst's end (a fall of COLLECT_AFTER_DROP) and per busy spell's end (the first quiet sweep after COLLECT_AFTER_REQUESTS), none for churn or steady traffic, gc() looked for once, and V8's real one giving pages back.
import t from "tap";
import { COLLECT_AFTER_DROP, COLLECT_AFTER_REQUESTS, MemoryGiveBack, QUIET_REQUESTS } from "../../src/relay/memory-give-back.js";
import type { CollectGarbage } from "../../src/http/stream-garbage.js";

const MB = 1024 * 1024;

/** A gc() that records its calls. */
function fakes() {
  const calls: unknown[] = [];
  let obtained = 0;
  const obtain = (): CollectGarbage => {
    obtained++;
    return (options) => calls.push(options);
  };
  return { calls, obtain, obtained: () => obtained };
}

/** Sweeps with a steady heap and `perSweep` requests begun in each. */
function sweeps(giveBack: MemoryGiveBack, loads: number[], perSweep = 1_000, from = 0): number {
  let begun = from;
  for (const load of loads) giveBack.observe({ load, begun: (begun += perSweep) });
  return begun;
}

t.test("a load that falls by COLLECT_AFTER_DROP from its high point is collected once, with the last-resort flavour", async (t) => {
  const gc = fakes();
  const giveBack = new MemoryGiveBack(gc.obtain);
  let begun = sweeps(giveBack, [0, 2_000, 5_000, 5_000]);
  t.equal(gc.obtained(), 0, "gc() is not looked for before a collection is due");
  begun = sweeps(giveBack, [5_000 - COLLECT_AFTER_DROP + 1], 1_000, begun);
  t.same(gc.calls, [], "a fall short of the drop is not a burst's end");
  begun = sweeps(giveBack, [100], 1_000, begun);
  t.same(gc.calls, [{ type: "major", flavor: "last-resort" }], "collected while the rest are still busy");
  begun = sweeps(giveBack, [0], 1_000, begun);
  t.equal(gc.calls.length, 1, "the high point starts again from where it was collected");
  sweeps(giveBack, [COLLECT_AFTER_DROP, 0], 1_000, begun);
  t.equal(gc.calls.length, 2, "the next burst's end is collected too");
  t.equal(giveBack.collections, 2);
  t.equal(gc.obtained(), 1, "looked for once");
});

t.test("a steady load with churn below the drop is never collected", async (t) => {
  const gc = fakes();
  const giveBack = new MemoryGiveBack(gc.obtain);
  let begun = 0;
  for (let tick = 0; tick < 1_000; tick++) giveBack.observe({ load: 3_000 + ((tick * 37) % (COLLECT_AFTER_DROP - 1)), begun: (begun += 500) });
  t.equal(gc.calls.length, 0);
});

t.test("a busy spell's end: the first quiet sweep after COLLECT_AFTER_REQUESTS requests collects, once", async (t) => {
  const gc = fakes();
  const giveBack = new MemoryGiveBack(gc.obtain);
  let begun = sweeps(giveBack, [10, 10, 10], COLLECT_AFTER_REQUESTS);
  t.equal(gc.calls.length, 0, "busy sweeps never collect, however many requests");
  begun = sweeps(giveBack, [10], QUIET_REQUESTS, begun);
  t.same(gc.calls, [{ type: "major", flavor: "last-resort" }], "the first quiet sweep does");
  begun = sweeps(giveBack, [10, 0, 0], 0, begun);
  t.equal(gc.calls.length, 1, "quiet sweeps after it have nothing new to give back");
  begun = sweeps(giveBack, [0, 0], (COLLECT_AFTER_REQUESTS - 1) / 2, begun);
  begun = sweeps(giveBack, [0], 0, begun);
  t.equal(gc.calls.length, 1, "a spell short of COLLECT_AFTER_REQUESTS is light traffic's, left to V8");
  begun = sweeps(giveBack, [0], QUIET_REQUESTS + 1, begun);
  t.equal(gc.calls.length, 1, "QUIET_REQUESTS + 1 in a sweep is not quiet");
  sweeps(giveBack, [0], 0, begun);
  t.equal(gc.calls.length, 2, "the spell's end is collected once it has its requests");
  t.equal(gc.obtained(), 1, "looked for once");
});

t.test("steady light traffic (QUIET_REQUESTS a sweep) adds up to a spell and is collected once per COLLECT_AFTER_REQUESTS", async (t) => {
  const gc = fakes();
  const giveBack = new MemoryGiveBack(gc.obtain);
  sweeps(giveBack, Array.from({ length: (3 * COLLECT_AFTER_REQUESTS) / QUIET_REQUESTS + 1 }, () => 5), QUIET_REQUESTS);
  t.equal(gc.calls.length, 3);
});

t.test("a burst's collection counts for the spell too: no second one at the quiet sweep after it", async (t) => {
  const gc = fakes();
  const giveBack = new MemoryGiveBack(gc.obtain);
  let begun = sweeps(giveBack, [COLLECT_AFTER_DROP], COLLECT_AFTER_REQUESTS);
  begun = sweeps(giveBack, [0], COLLECT_AFTER_REQUESTS, begun);
  t.equal(gc.calls.length, 1, "the burst's end");
  sweeps(giveBack, [0, 0], 0, begun);
  t.equal(gc.calls.length, 1);
});

t.test("the first sweep has nothing to compare and is never quiet", async (t) => {
  const gc = fakes();
  const giveBack = new MemoryGiveBack(gc.obtain);
  giveBack.observe({ load: 0, begun: COLLECT_AFTER_REQUESTS });
  t.equal(gc.calls.length, 0);
});

t.test("with no gc() to be had it does nothing, and looks for one only once", async (t) => {
  let obtained = 0;
  const giveBack = new MemoryGiveBack(() => {
    obtained++;
    return undefined;
  });
  t.doesNotThrow(() => {
    for (let round = 1; round <= 3; round++) {
      giveBack.observe({ load: COLLECT_AFTER_DROP, begun: round * COLLECT_AFTER_REQUESTS });
      giveBack.observe({ load: 0, begun: round * COLLECT_AFTER_REQUESTS });
    }
  });
  t.equal(obtained, 1);
  t.equal(giveBack.collections, 0);
});

t.test("by default it asks V8's own gc() (no --expose-gc here) and reads V8's own heap: a quiet relay's garbage pages go back", async (t) => {
  t.notOk(process.execArgv.includes("--expose-gc"), "this test process has no --expose-gc");
  const v8 = await import("node:v8");
  const committed = () => v8.getHeapStatistics().total_heap_size;
  const giveBack = new MemoryGiveBack();
  giveBack.observe({ load: 0, begun: 0 });
  // A busy spell's garbage: objects kept long enough to reach the old generation, then dropped.
  let kept: Array<{ text: string; at: number }[]> = [];
  for (let batch = 0; batch < 60; batch++) kept.push(Array.from({ length: 5_000 }, (_, at) => ({ text: `request ${batch} ${at}`, at })));
  kept = [];
  giveBack.observe({ load: 0, begun: COLLECT_AFTER_REQUESTS });
  const before = committed();
  t.equal(giveBack.collections, 0, "not while busy");
  giveBack.observe({ load: 0, begun: COLLECT_AFTER_REQUESTS });
  t.equal(giveBack.collections, 1, "the quiet sweep after it collects");
  t.ok(committed() < before - 8 * MB, `V8's committed heap went back: ${(before / MB).toFixed(1)} -> ${(committed() / MB).toFixed(1)} MB`);
  t.equal(kept.length, 0);
});
