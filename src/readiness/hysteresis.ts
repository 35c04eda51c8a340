// Damps each check's result (rise/fall): a passing check turns failing only after n failed evaluations in a row, and back only after n passing ones.

/** `--readiness-failure-threshold` and `--readiness-success-threshold`; 1 and 1 is no damping. */
export interface Thresholds {
  readonly failure: number;
  readonly success: number;
}

export const NO_DAMPING: Thresholds = { failure: 1, success: 1 };

/** What one evaluation decided for a check: the state to report and, while a change waits, how far it has come. */
export interface Damped {
  readonly ok: boolean;
  /** Set while the raw result differs from the reported one: `1 of 3 failures`. */
  readonly pending?: string;
}

/**
 * One check's rise/fall state. The first evaluation reports what it found (before it the pod
 * was not ready anyway). `immediate` applies a result at once (fail open: the contract says it
 * does not wait); draining and maintenance are read live by /readyz, outside the damped checks.
 */
export class CheckDamper {
  readonly #thresholds: Thresholds;
  #reportedOk: boolean | undefined;
  #streak = 0;

  constructor(thresholds: Thresholds) {
    this.#thresholds = thresholds;
  }

  next(rawOk: boolean, immediate = false): Damped {
    if (this.#reportedOk === undefined || rawOk === this.#reportedOk || immediate) {
      this.#reportedOk = rawOk;
      this.#streak = 0;
      return { ok: rawOk };
    }
    this.#streak++;
    const needed = rawOk ? this.#thresholds.success : this.#thresholds.failure;
    if (this.#streak >= needed) {
      this.#reportedOk = rawOk;
      this.#streak = 0;
      return { ok: rawOk };
    }
    return { ok: this.#reportedOk, pending: `${this.#streak} of ${needed} ${rawOk ? "successes" : "failures"}` };
  }
}

/** A damper per check name, made on first use: every check kind goes through the same one rule. */
export class Hysteresis {
  readonly #thresholds: Thresholds;
  readonly #dampers = new Map<string, CheckDamper>();

  constructor(thresholds: Thresholds) {
    this.#thresholds = thresholds;
  }

  next(name: string, rawOk: boolean, immediate = false): Damped {
    let damper = this.#dampers.get(name);
    if (!damper) {
      damper = new CheckDamper(this.#thresholds);
      this.#dampers.set(name, damper);
    }
    return damper.next(rawOk, immediate);
  }
}
