// What /readyz, the admin status and the metrics read of the drain and of maintenance mode: a shape of its own, so that none of them depends on another for it.

/** Tells /readyz that the drain has begun, and whether the operator's maintenance mode is on. */
export interface DrainState {
  readonly draining: boolean;
  /** Undefined when there is no `maintenance` check (no --admin-listen). */
  readonly maintenance?: boolean | undefined;
}
