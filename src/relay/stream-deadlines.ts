// --idle-timeout and --max-request-duration (CONTRACT §15), once for both protocols: one coarse sweep over the exchanges in flight, reading counters they bump, never a timer per chunk.
import { SYSTEM_TIMERS, type Timers } from "../timers.js";

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
  /** The daemon's clock and timers; the runtime's by default. */
  readonly timers?: Timers;
  /** A fault in one exchange's ending is that exchange's, never the sweep's. */
  readonly reportFault: (error: unknown) => void;
}

/** One watched exchange: its sweep state and its place in the watch list (-1 once unwatched). */
export class Watch {
  readonly exchange: WatchedExchange;
  readonly since: number;
  seenActivity: number;
  quietSince: number;
  slot = -1;

  constructor(exchange: WatchedExchange, now: number) {
    this.exchange = exchange;
    this.since = now;
    this.seenActivity = exchange.activity;
    this.quietSince = now;
  }
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
 * most two sweep periods late). One timer for the whole relay, running while something
 * is watched (until the first sweep that finds nothing).
 *
 * The exchanges in flight are an array with swap-remove, each Watch knowing its slot, not a
 * Map: the relay's Map lives in V8's old generation, and a Map there that grows and shrinks
 * with every request allocates each new hash table in the old generation, garbage that waits
 * for a full collection (the h2 codec's stream table was measured so, StreamIdMap).
 */
export class StreamDeadlines {
  readonly #idleMs: number;
  readonly #maxDurationMs: number;
  readonly #timers: Timers;
  readonly #reportFault: (error: unknown) => void;
  readonly #intervalMs: number;
  readonly #watched: Watch[] = [];
  #timer: unknown = undefined;
  readonly #sweep = (): void => this.sweep();

  constructor(options: StreamDeadlinesOptions) {
    this.#idleMs = options.idleMs;
    this.#maxDurationMs = options.maxDurationMs;
    this.#timers = options.timers ?? SYSTEM_TIMERS;
    this.#reportFault = options.reportFault;
    this.#intervalMs = sweepIntervalMs(options.idleMs, options.maxDurationMs);
  }

  /** From the moment the request is sent on to the app; hand the Watch back to {@link unwatch}. */
  watch(exchange: WatchedExchange): Watch {
    const watch = new Watch(exchange, this.#timers.now());
    watch.slot = this.#watched.length;
    this.#watched.push(watch);
    this.#timer ??= this.#timers.setInterval(this.#sweep, this.#intervalMs);
    return watch;
  }

  /** The exchange is finished (or ended by the sweep); a second call does nothing. */
  unwatch(watch: Watch): void {
    if (watch.slot < 0) return;
    const last = this.#watched.pop()!;
    if (last !== watch) {
      this.#watched[watch.slot] = last;
      last.slot = watch.slot;
    }
    watch.slot = -1;
  }

  get watching(): number {
    return this.#watched.length;
  }

  /**
   * One pass: each exchange past a limit is unwatched, then told. Tests move the
   * daemon's timers, which run it. The timer stops at the first pass that finds nothing watched, not at
   * each unwatch: one request after another on one connection would otherwise start and stop
   * an interval per request.
   */
  sweep(): void {
    const watched = this.#watched;
    if (watched.length === 0) {
      if (this.#timer !== undefined) this.#timers.clearInterval(this.#timer);
      this.#timer = undefined;
      return;
    }
    const now = this.#timers.now();
    // From the end: an unwatch moves the last watch into the freed slot, and that one was seen.
    for (let slot = watched.length - 1; slot >= 0; slot--) {
      const watch = watched[slot];
      if (watch === undefined) continue; // an exchange ended by the one before took others with it
      const kind = this.#reached(watch, now);
      if (kind === undefined) continue;
      this.unwatch(watch);
      try {
        watch.exchange.deadlineReached(kind);
      } catch (error) {
        this.#reportFault(error);
      }
    }
  }

  #reached(watch: Watch, now: number): DeadlineKind | undefined {
    const exchange = watch.exchange;
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
