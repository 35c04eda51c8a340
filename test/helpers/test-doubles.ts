// Small test doubles shared by the suites: a clock moved by hand, a promise resolved by hand, a port nothing listens on.
import { readFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";

/** A Clock whose time only moves when a test moves it. */
export class ManualClock {
  time = 1000;
  now(): number {
    return this.time;
  }
}

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

/** Timers and a clock moved by hand: `advance` fires what has come due, in time order (for the Timers/clock interfaces of src/). */
export class ManualTimers {
  time: number;
  #next = 1;
  readonly #pending = new Map<number, { at: number; run: () => void }>();

  constructor(start = 0) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  setTimeout(run: () => void, ms: number): unknown {
    const id = this.#next++;
    this.#pending.set(id, { at: this.time + ms, run });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.#pending.delete(handle as number);
  }

  /** How many timers are set and not yet fired or cleared. */
  get pending(): number {
    return this.#pending.size;
  }

  /** Moves the clock by `ms`, firing every timer due by then. */
  advance(ms: number): void {
    this.time += ms;
    for (const [id, timer] of [...this.#pending].sort((a, b) => a[1].at - b[1].at)) {
      if (timer.at > this.time || !this.#pending.has(id)) continue;
      this.#pending.delete(id);
      timer.run();
    }
  }
}

/** Resolves with `promise`, or with `late` when it has not settled within `ms`: a test then fails on an assertion instead of hanging the file. */
export function within<T, L>(promise: Promise<T>, ms: number, late: L): Promise<T | L> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([promise, new Promise<L>((resolve) => (timer = setTimeout(() => resolve(late), ms)))]).finally(() => clearTimeout(timer));
}
