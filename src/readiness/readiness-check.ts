// The readiness check behind /readyz: scan, decide, log transitions, cached with one shared scan.
import type { Logger } from "pino";
import { SOCKET_TABLES, type ListenerScan } from "../procfs/listener-scan.js";
import { CachedCheck, type Clock } from "./cached-check.js";
import { TransitionLog } from "./transitions.js";
import { decideVerdict, type Verdict } from "./verdict.js";

/** Anything that can scan the socket tables (ListenerScanner, or a counted fake in tests). */
export interface Scanner {
  scan(): Promise<ListenerScan>;
}

export interface ReadinessCheckOptions {
  /** Ascending, unique; empty means readiness is not gated on listeners. */
  readonly requiredPorts: readonly number[];
  readonly scanner: Scanner;
  readonly log: Logger;
  readonly ttlMs: number;
  readonly clock?: Clock;
}

/** Nothing required: always ready, and no scan is ever made. */
const NOTHING_REQUIRED: Verdict = { state: "present", ready: true, ports: [] };

/** Answers "are the required listeners there?" at most one scan per TTL, however many callers. */
export class ReadinessCheck {
  readonly #requiredPorts: readonly number[];
  readonly #cache: CachedCheck<Verdict> | undefined;

  constructor(options: ReadinessCheckOptions) {
    this.#requiredPorts = options.requiredPorts;
    if (options.requiredPorts.length === 0) return;
    const transitions = new TransitionLog(options.log);
    const { scanner, requiredPorts, log } = options;
    this.#cache = new CachedCheck({
      ttlMs: options.ttlMs,
      clock: options.clock,
      run: async () => {
        const scan = await scanSafely(scanner);
        // The benchmark counts these to prove the cache bounds reads; off (a no-op) below trace.
        log.trace({ unreadableTables: scan.unreadableTables.length }, "socket tables scanned");
        const verdict = decideVerdict(requiredPorts, scan);
        transitions.record(scan, verdict);
        return verdict;
      },
    });
  }

  get requiredPorts(): readonly number[] {
    return this.#requiredPorts;
  }

  /** The cached verdict if fresh, synchronously; undefined means call {@link check}. */
  peek(): Verdict | undefined {
    return this.#cache ? this.#cache.peek() : NOTHING_REQUIRED;
  }

  /** The current verdict: cached, shared with a scan in flight, or from a new scan. */
  check(): Promise<Verdict> {
    return this.#cache ? this.#cache.get() : Promise.resolve(NOTHING_REQUIRED);
  }
}

/** A scanner that throws (a bug, not a table problem) fails open like an unreadable table. */
async function scanSafely(scanner: Scanner): Promise<ListenerScan> {
  try {
    return await scanner.scan();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      listeningPorts: new Set(),
      unreadableTables: SOCKET_TABLES.map((table) => ({ table, error: `scan failed: ${message}` })),
    };
  }
}
