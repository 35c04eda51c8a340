// --upstream-connect-retry (CONTRACT §17): a request whose connection to the app was refused, so that nothing of it was sent, is tried again with a backoff until the window since its arrival has passed. One rule for both app sides (HTTP/1.1 and h2c).

/** The first wait, doubled each time up to the last. */
const FIRST_DELAY_MS = 25;
const MAX_DELAY_MS = 250;

/**
 * What a connect that reached nobody fails with: a TCP port with no listener, or a unix socket's
 * path that does not exist (yet). Nothing was written on such a connection: sending the request
 * again cannot make the app see it twice, whatever its method.
 */
export function isRefusedConnect(code: string | undefined): boolean {
  return code === "ECONNREFUSED" || code === "ENOENT";
}

/** The retries of one request: made when it arrives, asked at each refused connect. */
export class ConnectRetry {
  readonly #deadline: number;
  #count = 0;

  /** `windowMs` from now (the request's arrival). */
  constructor(windowMs: number) {
    this.#deadline = performance.now() + windowMs;
  }

  /** Retries made so far: the access line's `connectRetries`. */
  get count(): number {
    return this.#count;
  }

  /**
   * The wait before the next try after a refusal with `code`, counted as a retry; undefined when
   * the failure is not a refused connect or the window has passed (the 502 of today follows).
   */
  nextDelay(code: string | undefined): number | undefined {
    if (!isRefusedConnect(code)) return undefined;
    const delay = Math.min(FIRST_DELAY_MS * 2 ** this.#count, MAX_DELAY_MS);
    if (performance.now() + delay > this.#deadline) return undefined;
    this.#count++;
    return delay;
  }
}
