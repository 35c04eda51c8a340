// While the warm-up runs, V8 takes a hot function to TurboFan sooner, so the warm-up's exchanges compile the relay's hot path before the first client; its default comes back after.

/**
 * V8's own default for `--invocation-count-for-turbofan` in the embedded runtime (13.6; a test
 * reads the runtime's `--v8-options` and holds this to it). The binary never sets the flag
 * (sea-config.json), so this is the value to put back.
 */
export const DEFAULT_INVOCATIONS_FOR_TURBOFAN = 3000;

/**
 * The threshold while warming. V8 charges a function's tier-up budget by the bytecode it runs
 * against its length times this count, so a long function taking one branch per call (the
 * client connection's head handler) stayed in Maglev through 10,000 warm-up exchanges at 3,000,
 * and TurboFan compiled it, 12 ms on the main thread, in the first second of client traffic.
 * At 500 the hot path is in TurboFan within the first 2,000 or so. Only while warming: under
 * traffic a lower threshold would compile colder code too.
 */
export const WARM_UP_INVOCATIONS_FOR_TURBOFAN = 500;

/**
 * Runs `warm` with the lower threshold and puts V8's default back when it settles, whatever its
 * outcome. V8 reads the flag each time it sets a function's budget, so the change applies to
 * budgets set from then on. `setFlags` is node:v8's, or a test's recorder.
 */
export async function withEagerTurbofan<T>(warm: () => Promise<T>, setFlags: (flags: string) => void = setV8Flags): Promise<T> {
  setFlags(`--invocation-count-for-turbofan=${WARM_UP_INVOCATIONS_FOR_TURBOFAN}`);
  try {
    return await warm();
  } finally {
    setFlags(`--invocation-count-for-turbofan=${DEFAULT_INVOCATIONS_FOR_TURBOFAN}`);
  }
}

/** node:v8's setter, loaded at the warm-up rather than at import: node:v8 costs every start about 1 ms (src/snapshot-build.ts), and an app that listens at once has no warm-up. */
function setV8Flags(flags: string): void {
  process.getBuiltinModule("node:v8").setFlagsFromString(flags);
}
