// The memory of queued requests (heap delta around a full gc): bounded per entry, and all of it returned once the queue empties.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import t from "tap";
import { ConcurrencyLimiter, type AdmissionWaiter } from "../../src/overload/concurrency-limiter.js";

/** 10× the 10,000: the heap moves by a few hundred KiB on its own under tap, so a bigger delta measures better. */
const ENTRIES = 100_000;

/** gc() without starting node with --expose-gc (as src/relay/stream-garbage.ts gets it). */
function collector(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

/** The smallest waiter a caller could have: one field, methods on the prototype. */
class MinimalWaiter implements AdmissionWaiter {
  state = 0;
  admitted(): void {
    this.state = 1;
  }
  rejected(): void {
    this.state = 2;
  }
}

function heapAfterGc(gc: () => void): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

t.test(`${ENTRIES} queued requests: bytes per entry (so 10,000 in a tenth of it), and all returned after the queue empties`, async (t) => {
  const gc = collector();
  const limiter = new ConcurrencyLimiter({ limit: 1, maxQueue: ENTRIES, queueTimeoutMs: 60_000 });
  limiter.acquire(new MinimalWaiter());
  const shared = new MinimalWaiter();
  const before = heapAfterGc(gc);
  // The limiter's own cost: one QueuedRequest per entry (the waiter here is one shared object).
  for (let index = 0; index < ENTRIES; index++) limiter.acquire(shared);
  const queuedOnly = heapAfterGc(gc);
  limiter.rejectQueued();
  const emptied = heapAfterGc(gc);
  // With a waiter object of its own per entry, as a caller's per-request state would be.
  for (let index = 0; index < ENTRIES; index++) limiter.acquire(new MinimalWaiter());
  const withWaiters = heapAfterGc(gc);
  limiter.rejectQueued();
  const emptiedAgain = heapAfterGc(gc);
  const perEntry = (queuedOnly - before) / ENTRIES;
  const perEntryWithWaiter = (withWaiters - emptied) / ENTRIES;
  const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;
  t.comment(`queue entry: ${perEntry.toFixed(1)} bytes (10,000: ${kib(perEntry * 10_000)}); with a minimal waiter: ${perEntryWithWaiter.toFixed(1)} bytes (10,000: ${kib(perEntryWithWaiter * 10_000)})`);
  t.equal(limiter.queued, 0);
  t.ok(perEntry > 0 && perEntry < 160, `a queue entry stays small (${perEntry.toFixed(1)} bytes)`);
  t.ok(perEntryWithWaiter < 240, `with its waiter (${perEntryWithWaiter.toFixed(1)} bytes)`);
  // Within 10% of what the entries took: the rest is the heap's own movement under the test runner.
  const slack = (queuedOnly - before) / 10;
  t.ok(Math.abs(emptied - before) < slack, `emptied: back to where it was (${kib(emptied - before)})`);
  t.ok(Math.abs(emptiedAgain - before) < slack, `again (${kib(emptiedAgain - before)})`);
  limiter.release();
});
