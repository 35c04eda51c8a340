// --idle-timeout and --max-request-duration (CONTRACT §15), once for both protocols: one coarse sweep over the exchanges in flight, reading counters they bump, never a timer per chunk.
import type { Clock } from "../readiness/cached-check.js";

/** Which rule ended an exchange: the access log's `timeout` and the metric's reason say it. */
export type DeadlineKind = "idle" | "duration";

/** What the sweep reads of one exchange (RequestRecord implements it) and tells it. */
export interface WatchedExchange {
  /** Grows with every body byte moved either way; never read per chunk, only by the sweep. */
  readonly activity: number;
  /** False while the request is all sent and no head came yet: --response-header-timeout rules then. */
  readonly idleApplies: boolean;
  /** False for an open tunnel (a WebSocket lives as long as it moves). */
  readonly durationApplies: boolean;
  /** Ends the exchange; called once, after it is no longer watched. */
  deadlineReached(kind: DeadlineKind): void;
}

export interface StreamDeadlinesOptions {
  /** 0: off. */
  readonly idleMs: number;
  /** 0: off. */
  readonly maxDurationMs: number;
  readonly clock?: Clock;
  /** A fault in one exchange's ending is that exchange's, never the sweep's. */
  readonly reportFault: (error: unknown) => void;
}

/** The sweep state of one watched exchange. */
interface Watch {
  readonly since: number;
  seenActivity: number;
  quietSince: number;
}

/** The sweep's period: a fraction of the shorter limit, so an exchange ends at most an eighth late; bounded both ways. */
export function sweepIntervalMs(idleMs: number, maxDurationMs: number): number {
  const shortest = Math.min(idleMs || Infinity, maxDurationMs || Infinity);
  return Math.min(1_000, Math.max(50, Math.floor(shortest / 8)));
}

/**
 * Watches the exchanges in flight. Activity is a counter the exchange bumps as bytes move (no
 * clock read, no timer per chunk): the sweep compares it with what it saw last time, so an
 * exchange is ended only after it has been quiet for at least the idle time (never early; at
 * most two sweep periods late). One timer for the whole relay, running only while something
 * is watched.
 */
export class StreamDeadlines {
  readonly #idleMs: number;
  readonly #maxDurationMs: number;
  readonly #clock: Clock;
  readonly #reportFault: (error: unknown) => void;
  readonly #intervalMs: number;
  readonly #watched = new Map<WatchedExchange, Watch>();
  #timer: NodeJS.Timeout | undefined;

  constructor(options: StreamDeadlinesOptions) {
    this.#idleMs = options.idleMs;
    this.#maxDurationMs = options.maxDurationMs;
    this.#clock = options.clock ?? { now: () => performance.now() };
    this.#reportFault = options.reportFault;
    this.#intervalMs = sweepIntervalMs(options.idleMs, options.maxDurationMs);
  }

  /** From the moment the request is sent on to the app. */
  watch(exchange: WatchedExchange): void {
    const now = this.#clock.now();
    this.#watched.set(exchange, { since: now, seenActivity: exchange.activity, quietSince: now });
    this.#timer ??= setInterval(() => this.sweep(), this.#intervalMs).unref();
  }

  /** The exchange is finished. */
  unwatch(exchange: WatchedExchange): void {
    this.#watched.delete(exchange);
    if (this.#watched.size === 0 && this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  get watching(): number {
    return this.#watched.size;
  }

  /** One pass: each exchange past a limit is unwatched, then told. Tests call it with a hand-moved clock. */
  sweep(): void {
    const now = this.#clock.now();
    for (const [exchange, watch] of this.#watched) {
      const kind = this.#reached(exchange, watch, now);
      if (kind === undefined) continue;
      this.unwatch(exchange);
      try {
        exchange.deadlineReached(kind);
      } catch (error) {
        this.#reportFault(error);
      }
    }
  }

  #reached(exchange: WatchedExchange, watch: Watch, now: number): DeadlineKind | undefined {
    if (this.#maxDurationMs > 0 && exchange.durationApplies && now - watch.since >= this.#maxDurationMs) return "duration";
    if (this.#idleMs === 0) return undefined;
    const activity = exchange.activity;
    if (activity !== watch.seenActivity || !exchange.idleApplies) {
      watch.seenActivity = activity;
      watch.quietSince = now;
      return undefined;
    }
    return now - watch.quietSince >= this.#idleMs ? "idle" : undefined;
  }
}
