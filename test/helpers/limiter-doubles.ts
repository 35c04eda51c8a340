// Test doubles for the concurrency limiter: waiters and an observer that record every call (its clock and timers: test-doubles.ts's ManualTimers).
import type { AdmissionWaiter } from "../../src/overload/concurrency-limiter.js";
import type { OverloadObserver, RejectReason } from "../../src/overload/overload-observer.js";

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
