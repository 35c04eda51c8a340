// An HTTP health check (CONTRACT §3b, §15): GET one path on one origin (the app's own, or another container's); 200-399 passes, like the kubelet's httpGet probe.
import type { Dispatcher, Pool } from "undici";
import { formatDuration } from "../config/duration.js";
import { errorCode } from "../errors.js";
import { VERSION } from "../version.js";
import type { HealthProbe, ProbeOutcome } from "./health-probe.js";

export interface HttpHealthProbeOptions {
  /** `http://host:port`: for the upstream check the path prefix of --upstream is not applied. */
  readonly origin: string;
  readonly path: string;
  readonly timeoutMs: number;
  /** A unix socket's path to connect to instead of the origin's host and port (`--upstream unix:`). */
  readonly socketPath?: string | undefined;
}

/** The kubelet reads at most 10 KB of a probe's body; so do we, then the rest is discarded. */
const MAX_BODY_BYTES = 10 * 1024;

/** Probes one endpoint; one connection of its own, so proxied traffic never queues behind a probe or the reverse. */
export class HttpHealthProbe implements HealthProbe {
  #pool: Promise<Pool> | undefined;
  readonly #options: HttpHealthProbeOptions;
  readonly #timeoutReason: string;
  readonly #headers: string[];

  constructor(options: HttpHealthProbeOptions) {
    this.#options = options;
    this.#timeoutReason = `timeout after ${formatDuration(options.timeoutMs)}`;
    this.#headers = ["user-agent", `readiness-proxy/${VERSION}`, "accept", "*/*"];
  }

  /**
   * One probe. Never rejects, and always settles within the timeout of its dispatch: the timer answers for a
   * hung app and aborts its request, whatever state undici's own timers are in.
   */
  probe(): Promise<ProbeOutcome> {
    return new Promise((resolve) => {
      const handler = new ProbeHandler(resolve, this.#timeoutReason);
      this.#loadPool().then(
        (pool) => {
          // The app's time starts at the dispatch: loading undici (the first probe only) is ours.
          const timer = setTimeout(() => handler.timeOut(), this.#options.timeoutMs);
          handler.onSettled = () => clearTimeout(timer);
          try {
            pool.dispatch(
              { origin: this.#options.origin, path: this.#options.path, method: "GET", headers: this.#headers, headersTimeout: this.#options.timeoutMs, bodyTimeout: this.#options.timeoutMs },
              handler,
            );
          } catch (error) {
            handler.onError(error instanceof Error ? error : new Error(String(error)));
          }
        },
        (error: unknown) => handler.onError(error instanceof Error ? error : new Error(String(error))),
      );
    });
  }

  async close(): Promise<void> {
    await (await this.#pool)?.destroy();
  }

  /**
   * undici, loaded at the first probe rather than at start: the relay does not use it, and a
   * daemon without an HTTP check never pays for it (~6 ms of every start).
   */
  #loadPool(): Promise<Pool> {
    this.#pool ??= import("./upstream-pool.js").then(({ createUpstreamPool }) =>
      // One connection of its own; timeouts are set per probe.
      createUpstreamPool(this.#options.origin, { connections: 1, headersTimeout: this.#options.timeoutMs, keepAliveTimeout: 4_000, socketPath: this.#options.socketPath }),
    );
    return this.#pool;
  }
}

/** Settles on the status line; then reads up to 10 KB of body so the connection can be reused. */
class ProbeHandler implements Dispatcher.DispatchHandler {
  onSettled: () => void = () => {};
  readonly #resolve: (outcome: ProbeOutcome) => void;
  readonly #timeoutReason: string;
  #settled = false;
  #abort: ((reason?: Error) => void) | undefined;
  #bodyBytes = 0;

  constructor(resolve: (outcome: ProbeOutcome) => void, timeoutReason: string) {
    this.#resolve = resolve;
    this.#timeoutReason = timeoutReason;
  }

  timeOut(): void {
    this.#settle({ ok: false, reason: this.#timeoutReason, err: "timed out" });
    this.#abort?.(new Error("upstream health check timed out"));
  }

  onConnect(abort: (reason?: Error) => void): void {
    this.#abort = abort;
    if (this.#settled) abort(new Error("upstream health check timed out"));
  }

  onHeaders(statusCode: number): boolean {
    if (statusCode < 200) return true; // interim
    this.#settle(statusCode < 400 ? { ok: true, status: statusCode } : { ok: false, reason: `status ${statusCode}`, status: statusCode });
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.#bodyBytes += chunk.length;
    if (this.#bodyBytes > MAX_BODY_BYTES) this.#abort?.(new Error("health body over 10 KB: discarded"));
    return true;
  }

  onComplete(): void {}

  onError(error: Error): void {
    const code = errorCode(error);
    const reason = code === "ECONNREFUSED" ? "connection refused" : code === "UND_ERR_HEADERS_TIMEOUT" ? this.#timeoutReason : "connection failed";
    this.#settle({ ok: false, reason, err: code === undefined ? error.message : `${code}: ${error.message}` });
  }

  #settle(outcome: ProbeOutcome): void {
    if (this.#settled) return;
    this.#settled = true;
    this.onSettled();
    this.#resolve(outcome);
  }
}
