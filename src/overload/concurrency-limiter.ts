// At most `limit` requests in flight to the app, the rest in a bounded first-come-first-served queue with one timeout (CONTRACT §10).
import { NO_OVERLOAD_OBSERVER, type OverloadObserver } from "./overload-observer.js";
import { WaitQueue, type QueueLinks } from "./wait-queue.js";
import { SYSTEM_TIMERS, type Timers } from "../timers.js";

/**
 * The request behind a queued admission: told exactly once, later, how its wait ended, unless it
 * left the queue by {@link QueuedRequest.cancel} (then never). Implemented by the caller's own
 * per-request object, so queueing allocates no closure.
 */
export interface AdmissionWaiter {
  /**
   * A slot is this request's after `waitedMs` in the queue. Called synchronously from the
   * `release()` that freed it. The slot is the waiter's from this call on, whether the call
   * returns or throws: the caller's own end-of-request path must release it once.
   */
  admitted(waitedMs: number): void;
  /** It waited `--queue-timeout` (or the shutdown ran out: {@link ConcurrencyLimiter.rejectQueued}); it holds no slot. */
  rejected(reason: "queue_timeout", waitedMs: number): void;
}

/** What {@link ConcurrencyLimiter.acquire} decided: a slot now, a refusal now (queue full), or a place in the queue. */
export type Admission = "admitted" | "rejected" | QueuedRequest;

export interface LimiterOptions {
  /** Slots: requests in flight to the app at most (1 or more). */
  readonly limit: number;
  /** Requests that may wait (0: none; a request finding every slot taken is refused at once). */
  readonly maxQueue: number;
  /** The longest wait, above 0. */
  readonly queueTimeoutMs: number;
  /** The daemon's clock and timers (the queue's timer alone never keeps the process alive); the runtime's by default. */
  readonly timers?: Timers;
  readonly observer?: OverloadObserver;
  /**
   * Where an exception thrown by a waiter's callback goes, once the limiter has finished its own
   * step (its counts stay right, the other waiters are still called). By default it is rethrown
   * in a microtask: an uncaught exception, which the daemon logs and exits on like any other bug,
   * and never thrown into the unrelated caller of `release()`.
   */
  readonly onCallbackError?: (error: unknown) => void;
}

function rethrowLater(error: unknown): void {
  queueMicrotask(() => {
    throw error;
  });
}

/** A place in the queue; made by {@link ConcurrencyLimiter.acquire} only. It is its own list node (no wrapper, no array slot). */
export class QueuedRequest implements QueueLinks<QueuedRequest> {
  previous: QueuedRequest | undefined = undefined;
  next: QueuedRequest | undefined = undefined;
  readonly waiter: AdmissionWaiter;
  /** The limiter's clock when it was queued: the queue is in this order, and so are the deadlines. */
  readonly enqueuedAt: number;
  readonly #limiter: ConcurrencyLimiter;

  constructor(limiter: ConcurrencyLimiter, waiter: AdmissionWaiter, enqueuedAt: number) {
    this.#limiter = limiter;
    this.waiter = waiter;
    this.enqueuedAt = enqueuedAt;
  }

  /** The client left while queued: see {@link ConcurrencyLimiter.cancel}. */
  cancel(): boolean {
    return this.#limiter.cancel(this);
  }

  /** How long it has waited, on the limiter's clock (the one its enqueuedAt is on). */
  get waitedMs(): number {
    return this.#limiter.now() - this.enqueuedAt;
  }
}

/**
 * The slot count and the queue. Every operation is O(1) (an expiry is O(1) per request it
 * times out); the hot path, a free slot, is two comparisons and an increment, with no promise,
 * closure or allocation. The queue's timeout runs on one timer for the whole queue: requests
 * queue in arrival order and all wait the same timeout, so deadlines are in queue order and only
 * the head's needs a timer. That timer is left armed when the head leaves early (admitted or
 * cancelled); when it fires before the new head's deadline it is armed again for that one, which
 * costs one wake-up instead of a clearTimeout and a setTimeout per queued request.
 */
export class ConcurrencyLimiter {
  readonly limit: number;
  readonly maxQueue: number;
  readonly queueTimeoutMs: number;
  readonly #timers: Timers;
  readonly #observer: OverloadObserver;
  readonly #onCallbackError: (error: unknown) => void;
  readonly #queue = new WaitQueue<QueuedRequest>();
  readonly #onTimer = (): void => this.#expire();
  #inFlight = 0;
  #timer: unknown = undefined;
  #timerArmed = false;
  /** True while queued requests are being admitted: a release() from inside a callback only frees its slot, and the loop already running admits for it. */
  #admitting = false;

  constructor(options: LimiterOptions) {
    if (!(Number.isSafeInteger(options.limit) && options.limit >= 1)) throw new RangeError(`limit: expected an integer of 1 or more, got ${options.limit}`);
    if (!(Number.isSafeInteger(options.maxQueue) && options.maxQueue >= 0)) throw new RangeError(`maxQueue: expected an integer of 0 or more, got ${options.maxQueue}`);
    if (!(options.queueTimeoutMs > 0 && Number.isFinite(options.queueTimeoutMs))) throw new RangeError(`queueTimeoutMs: expected above 0, got ${options.queueTimeoutMs}`);
    this.limit = options.limit;
    this.maxQueue = options.maxQueue;
    this.queueTimeoutMs = options.queueTimeoutMs;
    this.#timers = options.timers ?? SYSTEM_TIMERS;
    this.#observer = options.observer ?? NO_OVERLOAD_OBSERVER;
    this.#onCallbackError = options.onCallbackError ?? rethrowLater;
  }

  /** The limiter's clock: the daemon's timers'. */
  now(): number {
    return this.#timers.now();
  }

  /** Slots taken: admitted requests not yet released. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Requests waiting. */
  get queued(): number {
    return this.#queue.length;
  }

  /**
   * A request wants a slot. "admitted": it has one now (the waiter is not called). "rejected":
   * every slot is taken and the queue is full; the caller answers 503 at once (the waiter is not
   * called). Otherwise it waits in the queue and exactly one of the waiter's callbacks comes
   * later, unless the returned handle is cancelled first. A free slot is taken at once only when
   * nobody waits, so a newcomer never overtakes the queue.
   */
  acquire(waiter: AdmissionWaiter): Admission {
    if (this.#inFlight < this.limit && this.#queue.length === 0) {
      this.#inFlight++;
      this.#observer.queueWait(0);
      return "admitted";
    }
    if (this.#queue.length >= this.maxQueue) {
      this.#observer.rejected("queue_full");
      return "rejected";
    }
    const now = this.#timers.now();
    const request = new QueuedRequest(this, waiter, now);
    this.#queue.push(request);
    this.#observer.queueLength(this.#queue.length);
    this.#armTimer(now);
    return request;
  }

  /**
   * An admitted request is done with its slot (its response ended, failed or was aborted). The
   * oldest waiter, if any, is admitted synchronously, before this returns. A release without an
   * admission is a bug in the caller and throws, since it would let one request too many through.
   */
  release(): void {
    if (this.#inFlight <= 0) throw new Error("ConcurrencyLimiter.release() without an admission (a slot released twice?)");
    this.#inFlight--;
    if (this.#queue.length > 0) this.#admitQueued();
  }

  /**
   * Takes a queued request out of the queue (its client left): no callback, counted as a wait
   * that ended. False, and nothing done, when it is no longer queued (admitted, timed out,
   * cancelled already): a late cancel is harmless.
   */
  cancel(request: QueuedRequest): boolean {
    if (!this.#queue.remove(request)) return false;
    this.#observer.queueLength(this.#queue.length);
    this.#observer.queueWait((this.#timers.now() - request.enqueuedAt) / 1000);
    return true;
  }

  /**
   * Every request still queued is rejected with "queue_timeout", oldest first: the shutdown
   * timeout ran out before a slot came (CONTRACT §10). Requests acquired later are handled as usual.
   */
  rejectQueued(): void {
    if (this.#timerArmed) {
      this.#timers.clearTimeout(this.#timer);
      this.#timerArmed = false;
      this.#timer = undefined;
    }
    const now = this.#timers.now();
    // Only those queued now: a callback that queues again cannot keep this loop going.
    for (let count = this.#queue.length; count > 0; count--) {
      const request = this.#queue.shift();
      if (request === undefined) break;
      this.#reject(request, now);
    }
    this.#armTimer(now);
  }

  /** Admits from the head while slots are free; not re-entered (see #admitting). */
  #admitQueued(): void {
    if (this.#admitting) return;
    this.#admitting = true;
    try {
      while (this.#inFlight < this.limit) {
        const request = this.#queue.shift();
        if (request === undefined) break;
        // Counted before the callback: whatever it does (release, acquire, throw), the counts are right.
        this.#inFlight++;
        const waitedMs = this.#timers.now() - request.enqueuedAt;
        this.#observer.queueLength(this.#queue.length);
        this.#observer.queueWait(waitedMs / 1000);
        try {
          request.waiter.admitted(waitedMs);
        } catch (error) {
          this.#onCallbackError(error);
        }
      }
    } finally {
      this.#admitting = false;
    }
  }

  /** The timer fired: every request that has waited the full timeout leaves, oldest first; then the timer is armed for the new head. */
  #expire(): void {
    this.#timerArmed = false;
    this.#timer = undefined;
    const now = this.#timers.now();
    for (let head = this.#queue.head; head !== undefined && now - head.enqueuedAt >= this.queueTimeoutMs; head = this.#queue.head) {
      this.#queue.shift();
      this.#reject(head, now);
    }
    this.#armTimer(now);
  }

  #reject(request: QueuedRequest, now: number): void {
    const waitedMs = now - request.enqueuedAt;
    this.#observer.queueLength(this.#queue.length);
    this.#observer.rejected("queue_timeout");
    this.#observer.queueWait(waitedMs / 1000);
    try {
      request.waiter.rejected("queue_timeout", waitedMs);
    } catch (error) {
      this.#onCallbackError(error);
    }
  }

  /** One timer, for the head's deadline, unless one is armed already (it is then for an earlier or equal deadline). */
  #armTimer(now: number): void {
    const head = this.#queue.head;
    if (this.#timerArmed || head === undefined) return;
    this.#timerArmed = true;
    // At least 1 ms: a timer that fires a fraction early (timers round to whole milliseconds) is armed again, not spun on.
    this.#timer = this.#timers.setTimeout(this.#onTimer, Math.max(1, Math.ceil(head.enqueuedAt + this.queueTimeoutMs - now)));
  }
}
