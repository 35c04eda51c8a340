// Cache tests: injected clock, counted runs, deferred promises instead of sleeps.
import t from "tap";
import { CachedCheck } from "../../src/readiness/cached-check.js";
import { ManualTimers, deferred } from "../helpers/test-doubles.js";

t.test("two calls within the TTL run once; after it, again and see the change", async (t) => {
  const clock = new ManualTimers(1000);
  let runs = 0;
  const check = new CachedCheck({ ttlMs: 1000, clock, run: async () => ++runs });
  t.equal(await check.get(), 1);
  clock.time += 999;
  t.equal(await check.get(), 1);
  t.equal(check.peek(), 1);
  clock.time += 1;
  t.equal(check.peek(), undefined, "expired");
  t.equal(await check.get(), 2);
  t.equal(runs, 2);
});

/** A check whose first run waits on `gate`; later runs answer "second". Counts runs. */
function gatedCheck() {
  const gate = deferred<string>();
  const counter = { runs: 0 };
  const check = new CachedCheck({
    ttlMs: 1000,
    clock: new ManualTimers(1000),
    run: () => {
      counter.runs++;
      return counter.runs === 1 ? gate.promise : Promise.resolve("second");
    },
  });
  return { check, gate, counter };
}

t.test("32 concurrent callers share one run and one answer", async (t) => {
  const { check, gate, counter } = gatedCheck();
  const callers = Array.from({ length: 32 }, () => check.get());
  await Promise.resolve();
  gate.resolve("answer");
  const answers = await Promise.all(callers);
  t.equal(counter.runs, 1);
  t.same(new Set(answers), new Set(["answer"]));
});

t.test("a rejected run is shared by its waiters, not cached, and never leaves the slot stuck", async (t) => {
  const { check, gate, counter } = gatedCheck();
  const waiters = [check.get(), check.get(), check.get()].map((waiter) => waiter.catch((error: Error) => error.message));
  gate.reject(new Error("boom"));
  t.same(await Promise.all(waiters), ["boom", "boom", "boom"]);
  t.equal(counter.runs, 1);
  t.equal(await check.get(), "second", "the next call runs again, no clock advance needed");
  t.equal(counter.runs, 2);
});

t.test("a run that throws synchronously clears the slot too", async (t) => {
  let runs = 0;
  const check = new CachedCheck<string>({
    ttlMs: 1000,
    clock: new ManualTimers(1000),
    run: () => {
      runs++;
      if (runs === 1) throw new Error("sync boom");
      return Promise.resolve("ok");
    },
  });
  await t.rejects(check.get(), /sync boom/);
  t.equal(await check.get(), "ok");
  t.equal(runs, 2);
});

t.test("latest() is the last run's answer however old, and never runs", async (t) => {
  const clock = new ManualTimers(1000);
  let runs = 0;
  const check = new CachedCheck({ ttlMs: 0, clock, run: async () => ++runs });
  t.equal(check.latest(), undefined, "nothing before the first run settles");
  t.equal(runs, 0);
  t.equal(await check.get(), 1);
  clock.time += 60_000;
  t.equal(check.peek(), undefined, "expired at once with a 0 s TTL");
  t.equal(check.latest(), 1);
  t.equal(runs, 1, "latest() started nothing");
});
