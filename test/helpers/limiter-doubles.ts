// Test doubles for the concurrency limiter: a clock and timers moved by hand, waiters and an observer that record every call.
import type { AdmissionWaiter, LimiterTimers } from "../../src/overload/concurrency-limiter.js";
import type { OverloadObserver, RejectReason } from "../../src/overload/overload-observer.js";

interface ManualTimer {
  readonly callback: () => void;
  readonly at: number;
}

/** A clock and a timer API whose time moves only in advance(); timers fire in deadline order, each at its own time. */
export class ManualTime implements LimiterTimers {
  time = 0;
  /** Timers armed and not yet fired or cleared. */
  readonly armed: ManualTimer[] = [];
  /** Every set() ever, with the delay asked for. */
  readonly delays: number[] = [];
  readonly clock = { now: () => this.time };

  set(callback: () => void, ms: number): unknown {
    const timer = { callback, at: this.time + ms };
    this.armed.push(timer);
    this.delays.push(ms);
    return timer;
  }

  clear(handle: unknown): void {
    const index = this.armed.indexOf(handle as ManualTimer);
    if (index >= 0) this.armed.splice(index, 1);
  }

  /** Moves time forward by `ms`, firing every timer due on the way at its own time. */
  advance(ms: number): void {
    const target = this.time + ms;
    for (;;) {
      const due = this.armed.filter((timer) => timer.at <= target).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.armed.splice(this.armed.indexOf(due), 1);
      this.time = Math.max(this.time, due.at);
      due.callback();
    }
    this.time = target;
  }
}

export type WaiterEvent = { readonly id: number; readonly event: "admitted" | RejectReason; readonly waitedMs: number };

/** A waiter that appends what happened to it to a shared list; `onAdmitted` lets a test act inside the callback. */
export class RecordingWaiter implements AdmissionWaiter {
  readonly id: number;
  readonly #events: WaiterEvent[];
  onAdmitted: (() => void) | undefined = undefined;

  constructor(id: number, events: WaiterEvent[]) {
    this.id = id;
    this.#events = events;
  }

  admitted(waitedMs: number): void {
    this.#events.push({ id: this.id, event: "admitted", waitedMs });
    this.onAdmitted?.();
  }

  rejected(reason: "queue_timeout", waitedMs: number): void {
    this.#events.push({ id: this.id, event: reason, waitedMs });
  }
}

/** Records every observer call. */
export class RecordingObserver implements OverloadObserver {
  readonly enabled = true;
  readonly lengths: number[] = [];
  readonly waits: number[] = [];
  readonly rejections: RejectReason[] = [];

  queueLength(length: number): void {
    this.lengths.push(length);
  }

  queueWait(seconds: number): void {
    this.waits.push(seconds);
  }

  rejected(reason: RejectReason): void {
    this.rejections.push(reason);
  }
}
