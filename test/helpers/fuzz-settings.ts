// One rule for every fuzz test's runs, seed and replay path: `make test` a fixed seed, `make fuzz` (FUZZ_RUNS set) a new one each run, <PREFIX>_SEED and <PREFIX>_PATH replay one.

/** `make test-unit` (TEST_TIER=unit) is the edit loop: it runs a tenth of each fuzz test's default cases (the first tenth: the same seed draws the same cases in the same order); `make test` runs them all, `make fuzz` long. */
const UNIT_TIER_SHARE = 10;

/** The default case count `runs` in the tier running now (`unitShare`: the divisor in `make test-unit`). */
export function tierRuns(runs: number, unitShare = UNIT_TIER_SHARE): number {
  return process.env.TEST_TIER === "unit" ? Math.max(1, Math.ceil(runs / unitShare)) : runs;
}

export interface FuzzSettingsOptions {
  /** The seed `make test` runs: one that passes, so CI is never a lottery. */
  readonly fixedSeed: number;
  /** Cases in `make test`, a tenth of them in `make test-unit` (<PREFIX>_RUNS overrides). */
  readonly defaultRuns: number;
  /** Under `make fuzz`, FUZZ_RUNS divided by this (a case that is a whole connection of requests costs more than one frame). */
  readonly fuzzShare?: number;
  /** `make test-unit` runs defaultRuns divided by this (10; 1 where a test's own check needs its whole default, as frame-fuzz's count of verdicts does). */
  readonly unitShare?: number;
  /** Widening the cases by hand (<PREFIX>_RUNS) draws a new seed too, as `make fuzz` does. */
  readonly newSeedWhenRunsSet?: boolean;
}

export interface FuzzSettings {
  readonly runs: number;
  readonly seed: number;
  /** fast-check's path of a shrunk case to replay alone. */
  readonly path: string | undefined;
  /** FUZZ_RUNS is set: this is `make fuzz`. */
  readonly fuzzing: boolean;
  /** fast-check's numRuns, seed and path. */
  readonly options: { readonly numRuns: number; readonly seed: number; readonly path?: string };
}

export function fuzzSettings(prefix: string, { fixedSeed, defaultRuns, fuzzShare = 1, unitShare, newSeedWhenRunsSet = false }: FuzzSettingsOptions): FuzzSettings {
  const env = process.env;
  const fuzzing = env.FUZZ_RUNS !== undefined;
  const runsSet = env[`${prefix}_RUNS`];
  const runs = Number(runsSet ?? (fuzzing ? Math.ceil(Number(env.FUZZ_RUNS) / fuzzShare) : tierRuns(defaultRuns, unitShare)));
  const seedSet = env[`${prefix}_SEED`];
  const newSeed = fuzzing || (newSeedWhenRunsSet && runsSet !== undefined);
  const seed = seedSet !== undefined ? Number(seedSet) : newSeed ? (Date.now() ^ (Math.random() * 0x100000000)) | 0 : fixedSeed;
  const path = env[`${prefix}_PATH`];
  return { runs, seed, path, fuzzing, options: { numRuns: runs, seed, ...(path !== undefined ? { path } : {}) } };
}
