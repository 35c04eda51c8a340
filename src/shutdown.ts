// Graceful shutdown (CONTRACT §7): report draining, keep serving for the delay, close the listener, wait for in-flight requests.
import type { Logger } from "pino";
import type { DrainState } from "./http/drain-state.js";
import type { Listener } from "./relay/relay-server.js";

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
  /** Resolves when --shutdown-delay has passed since the drain began; undefined before it began. */
  #delayPassed: Promise<void> | undefined;
  #stopping = false;
  readonly #began: Promise<void>;
  #onBegin!: () => void;

  constructor(options: ShutdownOptions) {
    this.#options = options;
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
    this.#delayPassed = delayMs > 0 ? wait(delayMs) : Promise.resolve();
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
    this.#stopping = true;
    if (this.#delayPassed === undefined) this.#begin(reason, skipDelay ? 0 : this.#options.delayMs);
    if (!skipDelay) await this.#delayPassed;
    // Stop accepting without destroying every idle keep-alive connection at once: a client may
    // have just sent its next request on one, and it would be reset (wrk through the close saw
    // ~30 resets a run). Each gets a grace to show its request, which is answered with
    // `Connection: close`; what is still idle after it is closed.
    const closed = new Promise<void>((resolve) => server.close(resolve));
    // Cleared once the race is decided: a grace left pending held a stopped daemon's process open for its second.
    let graceTimer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<void>((resolve) => (graceTimer = setTimeout(resolve, Math.min(IDLE_GRACE_MS, timeoutMs))));
    await Promise.race([closed, graceOver]);
    clearTimeout(graceTimer);
    server.closeIdleConnections();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), timeoutMs);
    });
    const cutShort = await Promise.race([closed.then(() => false), timedOut]);
    clearTimeout(timer);
    if (cutShort) {
      log.warn({ shutdownTimeoutMs: timeoutMs }, "shutdown timeout reached; closing remaining connections");
      this.#options.onTimeout?.();
      server.closeAllConnections();
    }
    await this.#options.closeUpstream();
    await this.#options.afterDrain?.(reason);
    log.info({ cutShort }, "stopped");
  }
}

function wait(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
