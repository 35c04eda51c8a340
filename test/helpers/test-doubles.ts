// Small test doubles shared by the suites: the daemon's timers moved by hand, a promise resolved by hand, a port nothing listens on.
import { readFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import type { Timers } from "../../src/timers.js";

/** A promise with resolve and reject exposed, for ordering without sleeps. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  return { promise, resolve, reject };
}

/**
 * Ports handed out by closedPort are drawn from below the kernel's ephemeral range, where no
 * bind(0) and no outgoing connection is ever given one: a port picked from bind(0) was taken by
 * another test's connection before the app bound it (EADDRINUSE in a CI run, with thousands of
 * loopback connections open beside it). 20000-29999: no test names a port there.
 */
const PICKED_FROM = 20_000;
const PICKED_BELOW = Math.min(30_000, ephemeralRangeStart());
const handedOut = new Set<number>();

function ephemeralRangeStart(): number {
  try {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "latin1").trim().split(/\s+/)[0]);
    return Number.isInteger(low) ? low : 0;
  } catch {
    return 0;
  }
}

function listenOnce(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(undefined));
    probe.listen(port, "127.0.0.1", () => {
      const bound = (probe.address() as AddressInfo).port;
      probe.close(() => resolve(bound));
    });
  });
}

/** A loopback port that was free a moment ago and that nothing listens on: connecting is refused. Never the same twice in a process. */
export async function closedPort(): Promise<number> {
  for (let tries = 0; PICKED_BELOW - PICKED_FROM > 1000 && tries < 100; tries++) {
    const candidate = PICKED_FROM + Math.floor(Math.random() * (PICKED_BELOW - PICKED_FROM));
    if (handedOut.has(candidate)) continue;
    if ((await listenOnce(candidate)) === undefined) continue;
    handedOut.add(candidate);
    return candidate;
  }
  // No room below the ephemeral range on this machine: the kernel's choice, as before.
  for (;;) {
    const port = await listenOnce(0);
    if (port !== undefined && !handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
}

/** One timer of {@link ManualTimers}: due at `at` (a test may move it), every `everyMs` again for an interval. */
export interface ManualTimer {
  at: number;
  readonly run: () => void;
  readonly everyMs: number | undefined;
}

/**
 * src/timers.ts's Timers moved by hand: `advance(ms)` runs every timer due on the way, in time
 * order (set order among equals), each with the clock at its own time, those set or re-armed on
 * the way included. A timeout that must not fire before its deadline is asserted exactly: advance
 * to a millisecond before, then one more.
 */
export class ManualTimers implements Timers {
  time: number;
  /** Armed and not yet fired (a timeout) or cleared, in the order set. */
  readonly armed: ManualTimer[] = [];
  /** Every delay ever asked of setTimeout or setInterval, in order. */
  readonly delays: number[] = [];

  constructor(start = 0) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  setTimeout(run: () => void, ms: number): unknown {
    return this.#arm(run, ms, undefined);
  }

  clearTimeout(handle: unknown): void {
    const index = this.armed.indexOf(handle as ManualTimer);
    if (index >= 0) this.armed.splice(index, 1);
  }

  setInterval(run: () => void, ms: number): unknown {
    return this.#arm(run, ms, Math.max(1, ms));
  }

  clearInterval(handle: unknown): void {
    this.clearTimeout(handle);
  }

  /** How many timers are set and not yet fired or cleared. */
  get pending(): number {
    return this.armed.length;
  }

  /** Moves the clock by `ms`, running every timer due by then at its own time. */
  advance(ms: number): void {
    const target = this.time + ms;
    for (;;) {
      let due: ManualTimer | undefined;
      for (const timer of this.armed) if (timer.at <= target && (due === undefined || timer.at < due.at)) due = timer;
      if (due === undefined) break;
      this.time = Math.max(this.time, due.at);
      if (due.everyMs === undefined) this.armed.splice(this.armed.indexOf(due), 1);
      else due.at += due.everyMs;
      due.run();
    }
    this.time = target;
  }

  /** {@link advance}, in steps of at most `stepMs`, letting the I/O and promises a step set going settle before the next. */
  async pass(ms: number, stepMs = ms): Promise<void> {
    let left = ms;
    do {
      this.advance(Math.min(stepMs, left));
      left -= stepMs;
      await new Promise((resolve) => setImmediate(resolve));
    } while (left > 0);
  }

  /** {@link pass} 100 ms a step until `promise` settles or `maxMs` have passed on the clock; resolves with it (or rejects as it does). */
  async until<T>(promise: Promise<T>, maxMs: number): Promise<T> {
    let settled = false;
    promise.then(
      () => (settled = true),
      () => (settled = true),
    );
    for (let moved = 0; !settled && moved < maxMs; moved += 100) await this.pass(100);
    return promise;
  }

  #arm(run: () => void, ms: number, everyMs: number | undefined): ManualTimer {
    const timer = { at: this.time + Math.max(0, ms), run, everyMs };
    this.armed.push(timer);
    this.delays.push(ms);
    return timer;
  }
}

/** Resolves with `promise`, or with `late` when it has not settled within `ms`: a test then fails on an assertion instead of hanging the file. */
export function within<T, L>(promise: Promise<T>, ms: number, late: L): Promise<T | L> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([promise, new Promise<L>((resolve) => (timer = setTimeout(() => resolve(late), ms)))]).finally(() => clearTimeout(timer));
}
