// The streamed-body collector: one minor collection per 4 MiB of body, gc() obtained only when first due, and a real gc() without --expose-gc.
import t from "tap";
import { COLLECT_EVERY_BYTES, StreamGarbage, exposeGc } from "../../src/relay/stream-garbage.js";

t.test("one minor collection per COLLECT_EVERY_BYTES, counted across chunks", async (t) => {
  const calls: unknown[] = [];
  let obtained = 0;
  const garbage = new StreamGarbage(() => {
    obtained++;
    return (options) => calls.push(options);
  });
  const chunk = 64 * 1024;
  for (let sent = 0; sent < COLLECT_EVERY_BYTES - chunk; sent += chunk) garbage.streamed(chunk);
  t.equal(obtained, 0, "gc() is not looked for before a collection is due");
  for (let sent = COLLECT_EVERY_BYTES - chunk; sent < 3 * COLLECT_EVERY_BYTES; sent += chunk) garbage.streamed(chunk);
  t.same(calls, [{ type: "minor" }, { type: "minor" }, { type: "minor" }]);
  t.equal(obtained, 1, "looked for once");
  garbage.streamed(COLLECT_EVERY_BYTES - 1);
  t.equal(calls.length, 3, "not before the next COLLECT_EVERY_BYTES");
});

t.test("with no gc() to be had it does nothing, and looks for one only once", async (t) => {
  let obtained = 0;
  const garbage = new StreamGarbage(() => {
    obtained++;
    return undefined;
  });
  t.doesNotThrow(() => {
    for (let round = 0; round < 3; round++) garbage.streamed(COLLECT_EVERY_BYTES);
  });
  t.equal(obtained, 1);
});

t.test("exposeGc gives V8's own gc() in a process started without --expose-gc", async (t) => {
  t.notOk(process.execArgv.includes("--expose-gc"), "this test process has no --expose-gc");
  const gc = exposeGc();
  t.type(gc, "function");
  t.doesNotThrow(() => gc({ type: "minor" }));
});
