// GET /wait-for-drain (CONTRACT §14): the app container's preStop hook, answered once the drain in front of the app is done, never held long.
import type { ResponseWriter } from "./response-writer.js";
import { SYSTEM_TIMERS, type Timers } from "../timers.js";

/** How long an answer waits for a drain to begin: the pod's preStop hooks start together, so the sidecar's comes within this. */
export const DRAIN_BEGIN_WAIT_MS = 5_000;

/** The drain as the answer follows it (GracefulShutdown implements it). */
export interface DrainProgress {
  /** Resolves when a drain begins (a signal, the app's exit or the admin listener's POST /drain). */
  readonly began: Promise<void>;
  /** Resolves once the drain has passed --shutdown-delay (called after `began` resolved). */
  delayPassed(): Promise<void>;
}

/** The daemon's timers, as far as the wait uses them (unref'd: a held preStop never keeps the process alive; the listener does that). */
export type DrainTimers = Pick<Timers, "setTimeout" | "clearTimeout">;

export interface WaitForDrainOptions {
  readonly progress: DrainProgress;
  /** Resolves once every proxied request in flight at the call has ended (InFlightRequests). */
  readonly inFlight: { settled(): Promise<void> };
  /** --shutdown-timeout: the longest the requests in flight are waited for. */
  readonly timeoutMs: number;
  readonly beginWaitMs?: number;
  readonly timers?: DrainTimers;
}

function prepare(text: string): { readonly headers: readonly string[]; readonly body: Buffer } {
  const body = Buffer.from(text);
  return { body, headers: ["content-type", "application/json", "cache-control", "no-store", "content-length", String(body.length)] };
}

const DRAINED = prepare('{"drained":true}');
const NOT_DRAINED = prepare('{"drained":false}');

/**
 * Answers 200 `{"drained":true}` once a drain has passed its delay and the proxied requests in
 * flight at that moment (those in flight when it began among them) have ended: then nothing the
 * proxy forwarded is still with the app, and the kubelet may signal it. With no drain under way
 * it waits {@link DRAIN_BEGIN_WAIT_MS} for one, then answers `{"drained":false}`: an app
 * container restarted alone is never held. Requests that outlast --shutdown-timeout are not
 * waited for longer (`{"drained":false}`): the whole wait stays within delay + timeout + 5 s.
 * It starts nothing; several callers each get their answer.
 */
export class WaitForDrain {
  readonly #options: WaitForDrainOptions;
  readonly #timers: DrainTimers;

  constructor(options: WaitForDrainOptions) {
    this.#options = options;
    this.#timers = options.timers ?? SYSTEM_TIMERS;
  }

  answer(writer: ResponseWriter): void {
    void this.#drained().then((drained) => {
      const prepared = drained ? DRAINED : NOT_DRAINED;
      writer.send(200, prepared.headers, prepared.body);
    });
  }

  async #drained(): Promise<boolean> {
    const { progress, inFlight, timeoutMs, beginWaitMs = DRAIN_BEGIN_WAIT_MS } = this.#options;
    if (!(await this.#within(progress.began, beginWaitMs))) return false;
    await progress.delayPassed();
    return this.#within(inFlight.settled(), timeoutMs);
  }

  /** Whether `promise` resolved within `ms`. */
  #within(promise: Promise<void>, ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = this.#timers.setTimeout(() => resolve(false), ms);
      void promise.then(() => {
        this.#timers.clearTimeout(timer);
        resolve(true);
      });
    });
  }
}
