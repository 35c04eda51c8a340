// The daemon's time: a monotonic clock and timers on it, injected once at createDaemon so every timeout below runs on one source that tests move by hand.

/**
 * The value of a field that will hold a clock reading but has none yet: 0, written -0 so that V8
 * stores the field as a double from the first object on (-0 is not a small integer). A field
 * first given a small integer changes representation at its first reading, and V8 then retires
 * the hidden class of every object made before; the daemon's own objects, made before the
 * warm-up, then met code the warm-up had compiled for the new class and deoptimised it
 * ("wrong map") at the first client. Compares, adds and prints as 0.
 */
export const NO_READING = -0;

/** A source of the current time in milliseconds (monotonic); tests pass a clock they advance by hand. */
export interface Clock {
  now(): number;
}

/**
 * The clock and timers on it, setTimeout's shape. A handle is opaque: only the Timers that made
 * it clears it. A timer never keeps the process alive (the listener and the sockets do that),
 * and clearing a handle already fired or cleared, or undefined, does nothing.
 */
export interface Timers extends Clock {
  /** Runs `run` once, `ms` from now. */
  setTimeout(run: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  /** Runs `run` every `ms` until cleared: one timer for a whole sweep, never one per member. */
  setInterval(run: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
}

/**
 * The runtime's own: performance.now() and node's timers, unref'd. The handles are node's
 * Timeout objects, so a timer costs what it cost before the clock was injected.
 */
export const SYSTEM_TIMERS: Timers = {
  now: () => performance.now(),
  setTimeout: (run, ms) => setTimeout(run, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout | undefined),
  setInterval: (run, ms) => setInterval(run, ms).unref(),
  clearInterval: (handle) => clearInterval(handle as NodeJS.Timeout | undefined),
};
