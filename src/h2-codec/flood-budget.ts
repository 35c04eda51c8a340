// A token bucket for one kind of peer behaviour that is legal once and an attack in bulk (rapid reset, glitches): a burst, refilled at a rate, on an injected clock.

/**
 * nghttp2's defaults (`lib/nghttp2_session.h`), the floor the codec's limits start from: a peer
 * may reset 1,000 streams at once and 33 a second after that (CVE-2023-44487), and make 10,000
 * mistakes at once and 330 a second (invalid frames, empty DATA, PRIORITY, unknown frames, and the
 * resets its own errors make us send: CVE-2025-8671).
 */
export const RAPID_RESET_BUDGET = { burst: 1000, perSecond: 33 } as const;
export const GLITCH_BUDGET = { burst: 10000, perSecond: 330 } as const;

/** The clock the buckets read, in milliseconds (the relay's coarse clock, or a test's). */
export type MonotonicClock = () => number;

/** One bucket per connection and kind: `spend` says false once the peer has spent more than the burst and the refill. */
export class FloodBudget {
  private tokens: number;
  private refilledAt: number;

  constructor(
    private readonly burst: number,
    private readonly perSecond: number,
    private readonly now: MonotonicClock,
  ) {
    this.tokens = burst;
    this.refilledAt = now();
  }

  /** Takes one token; false when there was none left (the caller ends the connection with ENHANCE_YOUR_CALM). */
  spend(): boolean {
    if (this.tokens < 1) this.refill();
    if (this.tokens < 1) return false;
    this.tokens--;
    return true;
  }

  /** Tokens left now (what the time since the last refill earned included). */
  get left(): number {
    this.refill();
    return this.tokens;
  }

  /** Takes `count` tokens, as many as there are (a mirror of a peer's bucket counting what we sent). */
  spendMany(count: number): void {
    if (count <= 0) return;
    this.refill();
    this.tokens = Math.max(0, this.tokens - count);
  }

  /** Adds what the time since the last refill earned, never past the burst. */
  private refill(): void {
    const now = this.now();
    const earned = ((now - this.refilledAt) * this.perSecond) / 1000;
    if (earned < 1) return;
    const whole = Math.floor(earned);
    this.tokens = Math.min(this.burst, this.tokens + whole);
    // The fraction not yet earned is kept: a peer cannot be starved by frequent calls.
    this.refilledAt += (whole * 1000) / this.perSecond;
  }
}
