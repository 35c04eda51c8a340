// What the concurrency limiter reports (metrics implement it); the no-op is what runs when metrics are off.

/** Why a request never reached the app: the queue was full when it came, or it waited too long. */
export type RejectReason = "queue_full" | "queue_timeout";

/** Told by the limiter as it admits, queues and refuses; plain numbers, so an implementation can keep them without allocating. */
export interface OverloadObserver {
  /** False for the no-op. */
  readonly enabled: boolean;
  /** The queue's length after it changed. */
  queueLength(length: number): void;
  /**
   * How long a request waited for its slot (CONTRACT §10): 0 for one admitted at once, the wait of
   * one admitted later, timed out, or whose client left while it was queued. Not called for a
   * request refused because the queue was full (that one is only `rejected("queue_full")`).
   */
  queueWait(seconds: number): void;
  rejected(reason: RejectReason): void;
}

function ignore(): void {}

/** Metrics off. */
export const NO_OVERLOAD_OBSERVER: OverloadObserver = {
  enabled: false,
  queueLength: ignore,
  queueWait: ignore,
  rejected: ignore,
};
