// What the HTTP/1.1 client connection runs, one per request in pipelining order: a proxied exchange (to an HTTP/1.1 or h2c app) or a local answer.

/** One request's life on the connection: its body arrives here, it answers through the connection. */
export interface Transaction {
  /** Runs once the transactions before it have answered (pipelining keeps order). */
  start(): void;
  onRequestBody(chunk: Buffer): void;
  onRequestEnd(): void;
  /** The client's socket accepts more response bytes. */
  onClientDrain(): void;
  /** The client went away before the answer ended. */
  onClientGone(): void;
  /**
   * A defect of ours ended this request (its connection's fault boundary): everything it holds
   * is released, and, when no byte of its answer went out yet, a whole error answer is written.
   * Returns whether one was.
   */
  abandon(): boolean;
}

/**
 * A fault boundary's release: the active transaction first (whether it wrote an answer is
 * returned), then every other. A throw in one abandon never stops the rest: the connection's
 * destruction after it is what is left to free them.
 */
export function abandonAll(active: Transaction | undefined, others: readonly Transaction[]): boolean {
  let answered = false;
  if (active !== undefined) {
    try {
      answered = active.abandon();
    } catch {
      // The defect is in the abandoning itself.
    }
  }
  for (const transaction of others) {
    try {
      transaction.abandon();
    } catch {
      // As above.
    }
  }
  return answered;
}
