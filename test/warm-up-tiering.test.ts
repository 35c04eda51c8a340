// The warm-up's lower TurboFan threshold: set before the warm-up, V8's default put back after it whatever its end, and that default the embedded runtime's own.
import { execFileSync } from "node:child_process";
import t from "tap";
import { DEFAULT_INVOCATIONS_FOR_TURBOFAN, WARM_UP_INVOCATIONS_FOR_TURBOFAN, withEagerTurbofan } from "../src/warm-up-tiering.js";

const LOWER = `--invocation-count-for-turbofan=${WARM_UP_INVOCATIONS_FOR_TURBOFAN}`;
const DEFAULT = `--invocation-count-for-turbofan=${DEFAULT_INVOCATIONS_FOR_TURBOFAN}`;

t.test("the constant put back is the runtime's own default (the tests run on the embedded runtime)", async (t) => {
  const options = execFileSync(process.execPath, ["--v8-options"], { encoding: "utf8" });
  t.match(options, new RegExp(`default: ${DEFAULT}\\b`), "V8's default, as this runtime prints it");
});

t.test("the threshold is lowered while the warm-up runs and put back once it resolves", async (t) => {
  const set: string[] = [];
  const result = await withEagerTurbofan(async () => {
    t.same(set, [LOWER], "lowered before the warm-up's first exchange");
    return 42;
  }, (flags) => set.push(flags));
  t.equal(result, 42);
  t.same(set, [LOWER, DEFAULT]);
});

t.test("a warm-up that rejects still gets the default back, and its rejection reaches the caller", async (t) => {
  const set: string[] = [];
  await t.rejects(
    withEagerTurbofan(() => Promise.reject(new Error("peer gone")), (flags) => set.push(flags)),
    { message: "peer gone" },
  );
  t.same(set, [LOWER, DEFAULT]);
});

t.test("node:v8 takes the flag at run time without complaint (the real setter, both values)", async (t) => {
  t.equal(await withEagerTurbofan(async () => "warmed"), "warmed");
});
