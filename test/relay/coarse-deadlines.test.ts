// The sweep's deadline lists on a clock given as numbers: a tick over N members of which k are due looks at k and stops, oldest first; one kept is looked at again a delay later; one forgotten or started again is not due at its old time.
import t from "tap";
import { CoarseDeadlines } from "../../src/relay/coarse-deadlines.js";

const TICK_MS = 1_000;

t.test("over 10,000 members of which k are due, a tick looks at k, not 10,000", async (t) => {
  const deadlines = new CoarseDeadlines<number>(10 * TICK_MS);
  // Started one tick apart in tens: member m at (m / 1000) ticks.
  for (let member = 0; member < 10_000; member++) deadlines.start(member, 1 + Math.floor(member / 1_000) * TICK_MS);
  const seen: number[] = [];
  const looked = (now: number) => deadlines.takeDue(now, (member) => (seen.push(member), false));
  t.equal(looked(1 + 9 * TICK_MS), 0, "none due yet: nothing looked at");
  t.equal(looked(1 + 10 * TICK_MS), 1_000, "the first thousand due: those are looked at");
  t.same(seen.slice(0, 3), [0, 1, 2], "oldest first");
  t.equal(looked(1 + 10 * TICK_MS), 0, "the same tick again: none left due");
  t.equal(looked(1 + 12 * TICK_MS), 2_000, "two ticks on: the next two thousand");
  t.equal(deadlines.size, 7_000);
});

t.test("a member kept (due returns true) is looked at again one delay later, not on every tick before", async (t) => {
  const deadlines = new CoarseDeadlines<string>(TICK_MS);
  for (let index = 0; index < 5_000; index++) deadlines.start(`idle-${index}`, 1);
  deadlines.start("busy", 1);
  const visits = new Map<string, number>();
  const keepBusy = (member: string) => (visits.set(member, (visits.get(member) ?? 0) + 1), member === "busy");
  t.equal(deadlines.takeDue(1 + TICK_MS, keepBusy), 5_001, "all due once");
  // The idle ones went (false); the busy one alone is looked at, once a tick.
  for (let tick = 2; tick <= 10; tick++) t.equal(deadlines.takeDue(1 + tick * TICK_MS, keepBusy), 1, `tick ${tick}: one looked at`);
  t.equal(visits.get("busy"), 10);
  t.equal(visits.get("idle-0"), 1);
  t.equal(deadlines.takeDue(1 + 10 * TICK_MS + TICK_MS / 2, keepBusy), 0, "half a delay after its last look: not due");
});

t.test("started again, a member moves behind the others; forgotten, it is never looked at", async (t) => {
  const deadlines = new CoarseDeadlines<string>(TICK_MS);
  deadlines.start("a", 0);
  deadlines.start("b", 0);
  deadlines.start("c", 0);
  deadlines.start("a", 500);
  deadlines.forget("b");
  const seen: string[] = [];
  t.equal(deadlines.takeDue(TICK_MS, (member) => (seen.push(member), false)), 1);
  t.same(seen, ["c"], "b forgotten, a not due (started again at 500)");
  t.equal(deadlines.takeDue(1_500, (member) => (seen.push(member), false)), 1);
  t.same(seen, ["c", "a"]);
  t.throws(() => new CoarseDeadlines(0), RangeError, "a delay of 0 would look at one kept in the same tick forever");
});
