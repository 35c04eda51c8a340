// The burst collections: one memory-reducing gc() per fall of COLLECT_AFTER_DROP below the high point and per rise of it above the low point, none for churn, gc() looked for once, and the real one callable.
import t from "tap";
import { BurstGarbage, COLLECT_AFTER_DROP } from "../../src/relay/burst-garbage.js";
import type { CollectGarbage } from "../../src/relay/stream-garbage.js";

function counting() {
  const calls: unknown[] = [];
  let obtained = 0;
  const obtain = (): CollectGarbage => {
    obtained++;
    return (options) => calls.push(options);
  };
  return { calls, obtain, obtained: () => obtained };
}

t.test("a load that falls by COLLECT_AFTER_DROP from its high point is collected once, with the last-resort flavour", async (t) => {
  const gc = counting();
  const garbage = new BurstGarbage(gc.obtain);
  for (const load of [0, COLLECT_AFTER_DROP - 1]) garbage.observe(load);
  t.equal(gc.obtained(), 0, "gc() is not looked for before a collection is due");
  garbage.observe(5_000);
  garbage.observe(5_000);
  gc.calls.length = 0;
  garbage.observe(5_000 - COLLECT_AFTER_DROP + 1);
  t.same(gc.calls, [], "a fall short of the drop is not a burst's end");
  garbage.observe(100);
  t.same(gc.calls, [{ type: "major", flavor: "last-resort" }]);
  garbage.observe(0);
  t.equal(gc.calls.length, 1, "the high point starts again from where it was collected");
  garbage.observe(COLLECT_AFTER_DROP);
  t.equal(gc.calls.length, 2, "the next burst's arrival");
  garbage.observe(0);
  t.equal(gc.calls.length, 3, "and its end");
  t.equal(garbage.collections, 4, "and the two rises");
  t.equal(gc.obtained(), 1, "looked for once");
});

t.test("a load that rises by COLLECT_AFTER_DROP above its low point is collected once per rise, while it arrives", async (t) => {
  const gc = counting();
  const garbage = new BurstGarbage(gc.obtain);
  garbage.observe(0);
  garbage.observe(COLLECT_AFTER_DROP - 1);
  t.same(gc.calls, [], "a rise short of the drop is not a burst");
  garbage.observe(COLLECT_AFTER_DROP + 500);
  t.same(gc.calls, [{ type: "major", flavor: "last-resort" }], "the arriving burst's garbage");
  garbage.observe(2 * COLLECT_AFTER_DROP);
  t.equal(gc.calls.length, 1, "the low point starts again from where it was collected");
  garbage.observe(3 * COLLECT_AFTER_DROP + 500);
  t.equal(gc.calls.length, 2, "another thousand arrived");
  garbage.observe(3 * COLLECT_AFTER_DROP + 500);
  t.equal(gc.calls.length, 2, "held: nothing more");
});

t.test("a steady load with churn below the drop is never collected", async (t) => {
  const gc = counting();
  const garbage = new BurstGarbage(gc.obtain);
  garbage.observe(3_000);
  t.equal(gc.calls.length, 1, "its arrival");
  for (let tick = 0; tick < 1_000; tick++) garbage.observe(3_000 + ((tick * 37) % (COLLECT_AFTER_DROP - 1)));
  t.equal(gc.calls.length, 1, "then nothing for the churn");
});

t.test("with no gc() to be had it does nothing, and looks for one only once", async (t) => {
  let obtained = 0;
  const garbage = new BurstGarbage(() => {
    obtained++;
    return undefined;
  });
  t.doesNotThrow(() => {
    for (let round = 0; round < 3; round++) {
      garbage.observe(COLLECT_AFTER_DROP);
      garbage.observe(0);
    }
  });
  t.equal(obtained, 1);
  t.equal(garbage.collections, 0);
});

t.test("by default it asks V8's own gc() (no --expose-gc here), which takes the last-resort options", async (t) => {
  t.notOk(process.execArgv.includes("--expose-gc"), "this test process has no --expose-gc");
  const garbage = new BurstGarbage();
  t.doesNotThrow(() => garbage.observe(COLLECT_AFTER_DROP));
  t.equal(garbage.collections, 1);
});
