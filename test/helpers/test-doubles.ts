// Small test doubles shared by the suites: a clock moved by hand, a promise resolved by hand, a port nothing listens on.
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

/** A loopback port that was free a moment ago and that nothing listens on: connecting is refused. */
export function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
