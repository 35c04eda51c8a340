// Random sequences of acquire, release, cancel, time and rejectQueued (fast-check): the limit holds, the queue stays bounded, every waiter is told at most once, in FIFO order.
import fc from "fast-check";
import t from "tap";
import { ConcurrencyLimiter, QueuedRequest, type AdmissionWaiter } from "../../src/overload/concurrency-limiter.js";
import { ManualTimers } from "../helpers/test-doubles.js";

/**
 * What a waiter does when admitted: keep its slot, give it back at once (a request that failed at
 * once), start another request from inside the callback, or both (a slot is then free for a
 * moment while others wait: the newcomer must still queue behind them).
 */
type Behaviour = "hold" | "releaseAtOnce" | "acquireInside" | "releaseAndAcquire";

type Step =
  | { readonly op: "acquire"; readonly behaviour: Behaviour }
  | { readonly op: "release"; readonly pick: number }
  | { readonly op: "cancel"; readonly pick: number }
  | { readonly op: "advance"; readonly ms: number }
  | { readonly op: "rejectQueued" };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ op: fc.constant("acquire" as const), behaviour: fc.constantFrom<Behaviour>("hold", "hold", "releaseAtOnce", "acquireInside", "releaseAndAcquire") }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant("release" as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("cancel" as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("advance" as const), ms: fc.integer({ min: 0, max: 1_500 }) }) },
  { weight: 1, arbitrary: fc.constant({ op: "rejectQueued" as const }) },
);

interface Scenario {
  readonly limit: number;
  readonly maxQueue: number;
  readonly queueTimeoutMs: number;
  readonly steps: readonly Step[];
}

const scenario: fc.Arbitrary<Scenario> = fc.record({
  limit: fc.integer({ min: 1, max: 4 }),
  maxQueue: fc.integer({ min: 0, max: 6 }),
  queueTimeoutMs: fc.integer({ min: 1, max: 2_000 }),
  steps: fc.array(step, { maxLength: 120 }),
});

/** Runs one scenario against the limiter and a model of what it owes each request; throws on the first broken rule. */
function check({ limit, maxQueue, queueTimeoutMs, steps }: Scenario): void {
  const time = new ManualTimers();
  const limiter = new ConcurrencyLimiter({ limit, maxQueue, queueTimeoutMs, timers: time, onCallbackError: (error) => { throw error; } });
  /** Ids holding a slot, as the model sees it. */
  const holders: number[] = [];
  /** Ids waiting, with when they were queued and their handle. */
  const queued = new Map<number, { readonly at: number; readonly handle: QueuedRequest }>();
  const handles: QueuedRequest[] = [];
  const told = new Set<number>();
  let lastTold = -1;
  let nextId = 0;
  let rejectingAll = false;
  const fail = (message: string): never => {
    throw new Error(message);
  };

  const leaveQueue = (id: number, waitedMs: number) => {
    const entry = queued.get(id) ?? fail(`${id} told but not queued`);
    if (told.has(id)) fail(`${id} told twice`);
    if (id < lastTold) fail(`${id} told after ${lastTold}: not FIFO`);
    if (waitedMs !== time.time - entry.at) fail(`${id} waited ${waitedMs}, not ${time.time - entry.at}`);
    told.add(id);
    lastTold = id;
    queued.delete(id);
  };

  const acquire = (behaviour: Behaviour): void => {
    const id = nextId++;
    const waiter: AdmissionWaiter = {
      admitted: (waitedMs) => {
        leaveQueue(id, waitedMs);
        if (limiter.inFlight > limit) fail(`${limiter.inFlight} in flight, limit ${limit}`);
        holders.push(id);
        if (behaviour === "releaseAtOnce" || behaviour === "releaseAndAcquire") release(holders.length - 1);
        if (behaviour === "acquireInside" || behaviour === "releaseAndAcquire") acquire("hold");
      },
      rejected: (reason, waitedMs) => {
        leaveQueue(id, waitedMs);
        if (reason !== "queue_timeout") fail(`reason ${reason}`);
        if (!rejectingAll && waitedMs < queueTimeoutMs) fail(`${id} timed out after ${waitedMs} of ${queueTimeoutMs} ms`);
      },
    };
    const result = limiter.acquire(waiter);
    if (result === "admitted") {
      if (queued.size > 0) fail(`${id} admitted while ${queued.size} waited`);
      holders.push(id);
      if (behaviour === "releaseAtOnce" || behaviour === "releaseAndAcquire") release(holders.length - 1);
    } else if (result === "rejected") {
      if (queued.size < maxQueue) fail(`${id} refused with ${queued.size} of ${maxQueue} queued`);
    } else {
      queued.set(id, { at: time.time, handle: result });
      handles.push(result);
    }
  };

  const release = (index: number): void => {
    holders.splice(index, 1);
    limiter.release();
  };

  for (const { op, ...args } of steps) {
    if (op === "acquire") acquire((args as { behaviour: Behaviour }).behaviour);
    else if (op === "release") {
      if (holders.length > 0) release((args as { pick: number }).pick % holders.length);
    } else if (op === "cancel") {
      if (handles.length === 0) continue;
      const handle = handles[(args as { pick: number }).pick % handles.length]!;
      const id = [...queued].find(([, entry]) => entry.handle === handle)?.[0];
      if (handle.cancel() !== (id !== undefined)) fail(`cancel of ${id ?? "a request no longer queued"} answered wrong`);
      if (id !== undefined) queued.delete(id);
    } else if (op === "advance") time.advance((args as { ms: number }).ms);
    else {
      rejectingAll = true;
      limiter.rejectQueued();
      rejectingAll = false;
      if (queued.size > 0) fail("rejectQueued left requests queued");
    }
    // After every step, outside any callback:
    if (limiter.inFlight !== holders.length) fail(`${limiter.inFlight} in flight, the model has ${holders.length}`);
    if (limiter.inFlight > limit) fail(`${limiter.inFlight} in flight, limit ${limit}`);
    if (limiter.queued !== queued.size || queued.size > maxQueue) fail(`${limiter.queued} queued, the model has ${queued.size}, max ${maxQueue}`);
    if (queued.size > 0 && limiter.inFlight < limit) fail("a slot is free while requests wait");
    if (time.armed.length > 1) fail(`${time.armed.length} timers armed`);
    if (queued.size > 0 && time.armed.length === 0) fail("requests wait with no timer armed");
    for (const [id, entry] of queued) if (time.time - entry.at >= queueTimeoutMs) fail(`${id} still queued after ${time.time - entry.at} ms`);
  }
  for (const id of told) if (queued.has(id)) fail(`${id} told but still queued`);
}

t.test("random sequences keep every invariant", async (t) => {
  fc.assert(fc.property(scenario, (input) => check(input)), { numRuns: Number(process.env.LIMITER_RUNS ?? 2_000) });
  t.pass("no counterexample");
});

t.test("a long busy sequence (the property's own check on one fixed, heavy case)", async (t) => {
  const steps: Step[] = [];
  for (let round = 0; round < 2_000; round++) {
    const behaviour: Behaviour = round % 7 === 0 ? "releaseAtOnce" : round % 11 === 0 ? "acquireInside" : round % 13 === 0 ? "releaseAndAcquire" : "hold";
    steps.push({ op: "acquire", behaviour });
    if (round % 3 === 0) steps.push({ op: "release", pick: round });
    if (round % 5 === 0) steps.push({ op: "cancel", pick: round });
    if (round % 4 === 0) steps.push({ op: "advance", ms: (round * 37) % 700 });
  }
  t.doesNotThrow(() => check({ limit: 3, maxQueue: 20, queueTimeoutMs: 1_000, steps }));
});
