// Graceful shutdown (CONTRACT §7): report draining, keep serving for the delay, close the listener, wait for in-flight requests.
import type { Logger } from "pino";
import type { DrainState } from "./http/drain-state.js";
import type { Listener } from "./relay/relay-server.js";
import { SYSTEM_TIMERS, type Timers } from "./timers.js";

export interface ShutdownOptions {
  /** The flag /readyz and the server read; the shutdown sets it. */
  readonly drain: { draining: boolean };
  readonly server: Listener;
  readonly log: Logger;
  readonly delayMs: number;
  readonly timeoutMs: number;
  /**
   * Runs when the shutdown timeout runs out, before the remaining connections are cut: requests
   * still waiting for the app (the limiter's queue) get their answer rather than a reset.
   */
  readonly onTimeout?: () => void;
  /** Closes upstream connections once no request needs them. */
  readonly closeUpstream: () => Promise<void>;
  /** The last step, once nothing is in flight (the entrypoint form stops the app here). */
  readonly afterDrain?: (reason: string) => Promise<unknown>;
  /** The daemon's clock and timers: the delay, the idle grace and the timeout run on them; the runtime's by default. */
  readonly timers?: Timers;
}

export interface RunOptions {
  /** Skip --shutdown-delay: the app is already gone, so there is nothing to keep serving for. */
  readonly skipDelay?: boolean;
}

/** How long an idle keep-alive connection may take to show a request already on its way when the listener closes. */
export const IDLE_GRACE_MS = 1_000;

/** Drives one shutdown, and the drain that may begin before it without a signal (CONTRACT §14's admin `POST /drain`). */
export class GracefulShutdown implements DrainState {
  readonly #options: ShutdownOptions;
  readonly #timers: Timers;
  /** Resolves when --shutdown-delay has passed since the drain began; undefined before it began. */
  #delayPassed: Promise<void> | undefined;
  #stopping = false;
  /** Ends the delay's wait: a stop that skipped it (the app exited) must not be held by it. */
  #cancelDelay = noop;
  readonly #began: Promise<void>;
  #onBegin!: () => void;

  constructor(options: ShutdownOptions) {
    this.#options = options;
    this.#timers = options.timers ?? SYSTEM_TIMERS;
    this.#began = new Promise((resolve) => (this.#onBegin = resolve));
  }

  /** Whether the drain has begun. */
  get draining(): boolean {
    return this.#options.drain.draining;
  }

  /** Resolves when the drain begins (by a signal, the app's exit or the admin listener). */
  get began(): Promise<void> {
    return this.#began;
  }

  /** Resolves once the drain has served its --shutdown-delay; the drain must have begun. */
  delayPassed(): Promise<void> {
    return this.#delayPassed ?? this.#began.then(() => this.#delayPassed!);
  }

  /**
   * Begins the drain without stopping: /readyz 503 draining, gRPC health NOT_SERVING, HTTP/1.1
   * answers with `Connection: close`, and once the delay has passed GOAWAY to HTTP/2 clients
   * (their later connections are told at once). The listener stays open. Again: nothing more.
   * Returns whether it began now.
   */
  beginDrain(reason: string): boolean {
    if (this.#delayPassed !== undefined) return false;
    this.#begin(reason, this.#options.delayMs);
    void this.#delayPassed!.then(() => {
      if (!this.#stopping) this.#options.server.goAway();
    });
    return true;
  }

  #begin(reason: string, delayMs: number): void {
    const { drain, log, timeoutMs } = this.#options;
    drain.draining = true;
    log.info({ reason, shutdownDelayMs: delayMs, shutdownTimeoutMs: timeoutMs }, "draining");
    this.#delayPassed = delayMs > 0 ? new Promise((resolve) => (this.#cancelDelay = holdingTimeout(this.#timers, delayMs, resolve))) : Promise.resolve();
    this.#onBegin();
  }

  /**
   * Runs the shutdown (`reason`: the signal, or `app exited`) and resolves when the process may
   * exit. The delay lets the kubelet see /readyz fail and endpoints drop this pod before the
   * listener goes away (after an admin drain, only what is left of it is waited); then
   * in-flight requests (SSE streams included) get up to the timeout, and any left are cut.
   * Only then does `afterDrain` run, so an app behind us answers everything we forwarded.
   */
  async run(reason: string, { skipDelay = false }: RunOptions = {}): Promise<void> {
    const { server, log, timeoutMs } = this.#options;
    const timers = this.#timers;
    this.#stopping = true;
    if (this.#delayPassed === undefined) this.#begin(reason, skipDelay ? 0 : this.#options.delayMs);
    if (!skipDelay) await this.#delayPassed;
    // Stop accepting without destroying every idle keep-alive connection at once: a client may
    // have just sent its next request on one, and it would be reset (wrk through the close saw
    // ~30 resets a run). Each gets a grace to show its request, which is answered with
    // `Connection: close`; what is still idle after it is closed.
    const closed = new Promise<void>((resolve) => server.close(resolve));
    // Cleared once the race is decided: a grace left pending held a stopped daemon's process open for its second.
    let cancelGrace = noop;
    const graceOver = new Promise<void>((resolve) => (cancelGrace = holdingTimeout(timers, Math.min(IDLE_GRACE_MS, timeoutMs), resolve)));
    await Promise.race([closed, graceOver]);
    cancelGrace();
    server.closeIdleConnections();
    let cancelTimeout = noop;
    const timedOut = new Promise<boolean>((resolve) => (cancelTimeout = holdingTimeout(timers, timeoutMs, () => resolve(true))));
    const cutShort = await Promise.race([closed.then(() => false), timedOut]);
    cancelTimeout();
    if (cutShort) {
      log.warn({ shutdownTimeoutMs: timeoutMs }, "shutdown timeout reached; closing remaining connections");
      this.#options.onTimeout?.();
      server.closeAllConnections();
    }
    await this.#options.closeUpstream();
    await this.#options.afterDrain?.(reason);
    this.#cancelDelay();
    log.info({ cutShort }, "stopped");
  }
}

/** The hold's period: it is there to be pending, never to fire. */
const HOLD_MS = 2 ** 30;

/**
 * `run` after `ms` on `timers`; returns what cancels it. The daemon's timers never keep the
 * process alive, but a shutdown's wait must (a drain's delay with nothing else open would end the
 * process early): a runtime handle is held meanwhile, whatever clock times the wait.
 */
function holdingTimeout(timers: Timers, ms: number, run: () => void): () => void {
  const hold = setInterval(noop, HOLD_MS);
  const timer = timers.setTimeout(() => {
    clearInterval(hold);
    run();
  }, ms);
  return () => {
    clearInterval(hold);
    timers.clearTimeout(timer);
  };
}

function noop(): void {}
