// The concurrency limiter with a hand-moved clock and timers (no sleeps): FIFO, queue full, one timer for every timeout, cancel, rejectQueued, callbacks that throw or re-enter.
import t from "tap";
import { ConcurrencyLimiter, QueuedRequest, type LimiterOptions } from "../../src/overload/concurrency-limiter.js";
import { RecordingObserver, RecordingWaiter, type WaiterEvent } from "../helpers/limiter-doubles.js";
import { ManualTimers } from "../helpers/test-doubles.js";

function setup(options: Partial<LimiterOptions> = {}) {
  const time = new ManualTimers();
  const observer = new RecordingObserver();
  const events: WaiterEvent[] = [];
  const errors: unknown[] = [];
  const limiter = new ConcurrencyLimiter({
    limit: 2,
    maxQueue: 3,
    queueTimeoutMs: 10_000,
    timers: time,
    observer,
    onCallbackError: (error) => errors.push(error),
    ...options,
  });
  let nextId = 0;
  const waiter = () => new RecordingWaiter(nextId++, events);
  /** Acquires for a new waiter; the handle when it was queued. */
  const queue = () => {
    const result = limiter.acquire(waiter());
    if (!(result instanceof QueuedRequest)) throw new Error(`expected to be queued, was ${result}`);
    return result;
  };
  return { limiter, time, observer, events, errors, waiter, queue };
}

t.test("free slots admit at once, without calling the waiter; a wait of 0 each", async (t) => {
  const { limiter, observer, events, waiter } = setup();
  t.equal(limiter.acquire(waiter()), "admitted");
  t.equal(limiter.acquire(waiter()), "admitted");
  t.equal(limiter.inFlight, 2);
  t.equal(limiter.queued, 0);
  t.same(events, []);
  t.same(observer.waits, [0, 0]);
  limiter.release();
  t.equal(limiter.inFlight, 1);
  t.equal(limiter.acquire(waiter()), "admitted", "a released slot is free again");
});

t.test("FIFO: queued requests are admitted oldest first, one per release, synchronously, with their waits", async (t) => {
  const { limiter, time, observer, events, waiter, queue } = setup({ limit: 1, maxQueue: 10 });
  limiter.acquire(waiter());
  for (let index = 0; index < 4; index++) {
    queue();
    time.advance(100);
  }
  t.same(observer.lengths, [1, 2, 3, 4]);
  for (let index = 0; index < 4; index++) {
    limiter.release();
    t.equal(limiter.inFlight, 1, "the slot passed on, never freed in between");
  }
  t.same(
    events.map(({ id, event }) => `${id} ${event}`),
    ["1 admitted", "2 admitted", "3 admitted", "4 admitted"],
  );
  t.same(events.map((event) => event.waitedMs), [400, 300, 200, 100]);
  t.same(observer.waits, [0, 0.4, 0.3, 0.2, 0.1]);
  t.same(observer.lengths, [1, 2, 3, 4, 3, 2, 1, 0]);
  limiter.release();
  t.equal(limiter.inFlight, 0);
});

t.test("a full queue refuses at once: no waiter call, counted as queue_full, no wait observed", async (t) => {
  const { limiter, observer, events, waiter, queue } = setup({ limit: 1, maxQueue: 2 });
  limiter.acquire(waiter());
  queue();
  queue();
  t.equal(limiter.acquire(waiter()), "rejected");
  t.equal(limiter.queued, 2);
  t.same(observer.rejections, ["queue_full"]);
  t.same(observer.waits, [0], "only the admission at once");
  t.same(events, []);
});

t.test("maxQueue 0: nothing waits; beyond the limit every request is refused at once", async (t) => {
  const { limiter, time, observer, waiter } = setup({ limit: 1, maxQueue: 0 });
  t.equal(limiter.acquire(waiter()), "admitted");
  t.equal(limiter.acquire(waiter()), "rejected");
  t.equal(limiter.acquire(waiter()), "rejected");
  t.same(observer.rejections, ["queue_full", "queue_full"]);
  t.same(time.armed, [], "no timer");
  limiter.release();
  t.equal(limiter.acquire(waiter()), "admitted");
});

t.test("timeouts: one timer for the whole queue, each request rejected at its own deadline, in order", async (t) => {
  const { limiter, time, observer, events, waiter, queue } = setup({ limit: 1, maxQueue: 10 });
  limiter.acquire(waiter());
  queue(); // id 1 at 0
  time.advance(3_000);
  queue(); // id 2 at 3000
  time.advance(3_000);
  queue(); // id 3 at 6000
  t.equal(time.armed.length, 1, "one timer, however many wait");
  t.same(time.delays, [10_000], "armed once, for the head's deadline");
  time.advance(3_999); // 9999
  t.same(events, [], "nobody before their full timeout");
  time.advance(1); // 10000
  t.same(events, [{ id: 1, event: "queue_timeout", waitedMs: 10_000 }]);
  t.equal(time.armed.length, 1);
  time.advance(6_000); // 16000
  t.same(
    events.map(({ id, waitedMs }) => [id, waitedMs]),
    [[1, 10_000], [2, 10_000], [3, 10_000]],
    "each at its own deadline",
  );
  t.same(time.delays, [10_000, 3_000, 3_000], "then re-armed for each next head only");
  t.same(time.armed, [], "nothing left to time");
  t.same(observer.rejections, ["queue_timeout", "queue_timeout", "queue_timeout"]);
  t.same(observer.waits, [0, 10, 10, 10]);
  t.equal(limiter.inFlight, 1, "the running request keeps its slot");
  t.equal(limiter.queued, 0);
});

t.test("a head that leaves early leaves its timer armed; it fires, finds nothing due, and is armed for the new head", async (t) => {
  const { limiter, time, events, waiter, queue } = setup({ limit: 1, maxQueue: 10 });
  limiter.acquire(waiter());
  queue(); // id 1 at 0
  time.advance(4_000);
  queue(); // id 2 at 4000
  limiter.release(); // id 1 admitted at 4000
  t.same(time.delays, [10_000], "no timer work on admission");
  time.advance(6_000); // 10000: the old timer fires
  t.same(events, [{ id: 1, event: "admitted", waitedMs: 4_000 }], "id 2 is not timed out early");
  t.same(time.delays, [10_000, 4_000], "re-armed for id 2's deadline");
  time.advance(4_000); // 14000
  t.same(events.at(-1), { id: 2, event: "queue_timeout", waitedMs: 10_000 });
});

t.test("a timer that fires a fraction early is armed again for at least 1 ms, never spun", async (t) => {
  const { limiter, time, events, waiter, queue } = setup({ limit: 1 });
  limiter.acquire(waiter());
  time.time = 0.4;
  queue(); // at 0.4: deadline 10000.4, armed for 10000 ms
  // A system timer keeps whole milliseconds on its own clock: it may fire when ours reads 10000.0.
  (time.armed[0] as { at: number }).at = 10_000;
  time.advance(9_999.6);
  t.same(events, []);
  t.same(time.delays, [10_000, 1]);
  time.advance(1);
  t.equal(events.length, 1);
  t.equal(events[0]!.event, "queue_timeout");
});

t.test("cancel: the client left while queued; out of the queue in any position, no callback, later cancels do nothing", async (t) => {
  const { limiter, time, observer, events, waiter, queue } = setup({ limit: 1, maxQueue: 10 });
  limiter.acquire(waiter());
  const [a, b, c, d] = [queue(), queue(), queue(), queue()];
  time.advance(250);
  t.equal(b.cancel(), true, "from the middle");
  t.equal(a.cancel(), true, "the head");
  t.equal(d.cancel(), true, "the tail");
  t.equal(b.cancel(), false, "twice");
  t.equal(limiter.queued, 1);
  t.same(observer.lengths.slice(-3), [3, 2, 1]);
  t.same(observer.waits.slice(-3), [0.25, 0.25, 0.25], "a cancelled wait is a wait that ended");
  limiter.release();
  t.same(events, [{ id: 3, event: "admitted", waitedMs: 250 }], "the one left is admitted");
  t.equal(c.cancel(), false, "after its admission");
  t.equal(limiter.inFlight, 1, "a late cancel frees nothing");
  const e = queue();
  time.advance(10_000);
  t.equal(e.cancel(), false, "after its timeout");
  t.same(observer.rejections, ["queue_timeout"]);
});

t.test("rejectQueued: every queued request gets queue_timeout, oldest first; the timer is cleared; the limiter goes on", async (t) => {
  const { limiter, time, observer, events, waiter, queue } = setup({ limit: 1, maxQueue: 10 });
  limiter.acquire(waiter());
  queue();
  time.advance(1_000);
  queue();
  limiter.rejectQueued();
  t.same(events, [
    { id: 1, event: "queue_timeout", waitedMs: 1_000 },
    { id: 2, event: "queue_timeout", waitedMs: 0 },
  ]);
  t.same(observer.rejections, ["queue_timeout", "queue_timeout"]);
  t.same(time.armed, []);
  t.equal(limiter.queued, 0);
  t.equal(limiter.inFlight, 1, "what runs keeps running");
  queue();
  limiter.release();
  t.equal(events.at(-1)!.event, "admitted");
});

t.test("a release without an admission throws and changes nothing", async (t) => {
  const { limiter, waiter } = setup();
  t.throws(() => limiter.release(), /without an admission/);
  limiter.acquire(waiter());
  limiter.release();
  t.throws(() => limiter.release());
  t.equal(limiter.inFlight, 0);
});

t.test("a callback that throws: the counts stay right, the other waiters are still called, the error is reported", async (t) => {
  const { limiter, events, errors, waiter, queue } = setup({ limit: 1, maxQueue: 10 });
  limiter.acquire(waiter());
  const thrower = queue();
  (thrower.waiter as RecordingWaiter).onAdmitted = () => {
    throw new Error("admitted failed");
  };
  queue();
  t.doesNotThrow(() => limiter.release(), "never thrown into the caller of release()");
  t.same(errors.map((error) => (error as Error).message), ["admitted failed"]);
  t.equal(limiter.inFlight, 1, "the slot is the thrower's: it releases it on its own path");
  limiter.release();
  t.equal(events.at(-1)!.id, 2, "the next one is admitted as usual");
  const rejectedThrows = setup({ limit: 1, maxQueue: 10 });
  rejectedThrows.limiter.acquire(rejectedThrows.waiter());
  const failing = rejectedThrows.queue();
  failing.waiter.rejected = () => {
    throw new Error("rejected failed");
  };
  rejectedThrows.queue();
  rejectedThrows.time.advance(10_000);
  t.equal(rejectedThrows.errors.length, 1);
  t.same(rejectedThrows.events.map((event) => event.id), [2], "the second still timed out");
  t.equal(rejectedThrows.limiter.queued, 0);
  t.same(rejectedThrows.time.armed, [], "nothing left to time");
});

t.test("the default error report rethrows in a microtask, not into release()", async (t) => {
  const limiter = new ConcurrencyLimiter({ limit: 1, maxQueue: 1, queueTimeoutMs: 1_000 });
  limiter.acquire({ admitted: () => {}, rejected: () => {} });
  limiter.acquire({
    admitted: () => {
      throw new Error("from a waiter");
    },
    rejected: () => {},
  });
  const original = globalThis.queueMicrotask;
  const scheduled: Array<() => void> = [];
  globalThis.queueMicrotask = (callback) => scheduled.push(callback);
  try {
    t.doesNotThrow(() => limiter.release());
  } finally {
    globalThis.queueMicrotask = original;
  }
  t.equal(scheduled.length, 1);
  t.throws(() => scheduled[0]!(), /from a waiter/);
  limiter.release();
});

t.test("re-entry: waiters that release inside admitted() are admitted in a loop, not by recursion (10,000 deep)", async (t) => {
  const { limiter, events, waiter } = setup({ limit: 1, maxQueue: 10_000 });
  limiter.acquire(waiter());
  for (let index = 0; index < 10_000; index++) {
    const next = waiter();
    next.onAdmitted = () => limiter.release();
    limiter.acquire(next);
  }
  limiter.release();
  t.equal(events.length, 10_000);
  t.ok(events.every((event, index) => event.id === index + 1), "in order");
  t.equal(limiter.inFlight, 0);
  t.equal(limiter.queued, 0);
});

t.test("re-entry: a request acquired inside a callback queues behind those waiting, never overtakes them", async (t) => {
  const { limiter, events, waiter, queue } = setup({ limit: 2, maxQueue: 10 });
  limiter.acquire(waiter());
  limiter.acquire(waiter());
  const first = queue(); // id 2
  queue(); // id 3
  let late: unknown;
  (first.waiter as RecordingWaiter).onAdmitted = () => {
    limiter.release(); // a slot is free for a moment, and id 3 still waits
    late = limiter.acquire(waiter()); // id 4
  };
  limiter.release();
  t.ok(late instanceof QueuedRequest, "queued, although a slot was free for a moment");
  t.same(events.map((event) => event.id), [2, 3], "id 3 got the freed slot");
  t.equal(limiter.inFlight, 2);
  t.equal(limiter.queued, 1);
});

t.test("options out of range are a programming error", async (t) => {
  const base = { limit: 1, maxQueue: 0, queueTimeoutMs: 1 };
  t.throws(() => new ConcurrencyLimiter({ ...base, limit: 0 }), RangeError);
  t.throws(() => new ConcurrencyLimiter({ ...base, limit: 1.5 }), RangeError);
  t.throws(() => new ConcurrencyLimiter({ ...base, maxQueue: -1 }), RangeError);
  t.throws(() => new ConcurrencyLimiter({ ...base, queueTimeoutMs: 0 }), RangeError);
  t.throws(() => new ConcurrencyLimiter({ ...base, queueTimeoutMs: Infinity }), RangeError);
});
