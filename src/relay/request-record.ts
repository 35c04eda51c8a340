// What one proxied request reports as it goes: its concurrency slot, the metrics observer's calls, and its access-log line at the end.
import { requestIdOf } from "../http/request-id.js";
import type { RequestView } from "../http/response-writer.js";
import type { QueuedRequest } from "../overload/concurrency-limiter.js";
import type { RelayContext } from "./relay-context.js";

/**
 * One per proxied request. Every report is made once, whatever order the exchange ends in
 * (answered, failed, client gone, queued and refused). With metrics, the limiter and the
 * access log all off, no clock is read.
 */
export class RequestRecord {
  readonly #context: RelayContext;
  readonly #request: RequestView;
  readonly #remoteAddress: string | undefined;
  /** The protocol the client spoke, for the access log. */
  readonly protocol: "HTTP/1.1" | "HTTP/2";
  /** The answer's `grpc-status` (its headers or trailers), when it carried one. */
  grpcStatus: number | undefined;
  readonly #timed: boolean;
  readonly #startedAt: number;
  #queueMs: number | undefined;
  #upstreamMs: number | undefined;
  #status = 0;
  #bytesSent = 0;
  #inFlight = false;
  /** Its era in `context.inFlight` while admitted and not ended; -1 otherwise. */
  #era = -1;
  #holdsSlot = false;
  #logged = false;
  #requestId: string | undefined;

  constructor(context: RelayContext, request: RequestView, remoteAddress: string | undefined, protocol: "HTTP/1.1" | "HTTP/2" = "HTTP/1.1") {
    this.#context = context;
    this.#request = request;
    this.#remoteAddress = remoteAddress;
    this.protocol = protocol;
    this.#timed = context.observer.enabled || context.accessLog.enabled;
    this.#startedAt = this.#timed ? performance.now() : 0;
  }

  /** The id of the error pages, `X-Request-Id` and the access log: the client's own when sane, else one made once. */
  get requestId(): string {
    return (this.#requestId ??= requestIdOf(this.#request));
  }

  /** Sent on to the app (at once, or after `queueMs` in the limiter's queue, which gave it `slot`): in flight from here. */
  admitted(slot: boolean, queueMs: number | undefined): void {
    this.#holdsSlot = slot;
    this.#queueMs = queueMs;
    this.#era = this.#context.inFlight.begin();
    if (this.#context.observer.enabled) {
      this.#context.observer.requestStarted();
      this.#inFlight = true;
    }
  }

  /** Its client left (or a fault ended it) while queued: it leaves the queue, and its line says how long it waited. */
  leftQueue(queued: QueuedRequest): void {
    queued.cancel();
    this.refused(performance.now() - queued.enqueuedAt);
  }

  /** Never sent on: refused by the limiter, or timed out in its queue after `queueMs`. */
  refused(queueMs: number): void {
    this.#queueMs = queueMs;
  }

  /** The upstream's response head came. */
  upstreamHead(status: number): void {
    if (this.#timed) this.#upstreamMs = performance.now() - this.#startedAt;
    this.responseHead(status);
  }

  /** A response head went to the client (the upstream's or our own). */
  responseHead(status: number): void {
    this.#status = status;
    const observer = this.#context.observer;
    if (observer.enabled) observer.responseHead(status, this.#request.method, (performance.now() - this.#startedAt) / 1000);
  }

  bodySent(bytes: number): void {
    this.#bytesSent += bytes;
  }

  /** The exchange with the app is over (a tunnel's too, once open): no longer in flight. */
  ended(): void {
    if (this.#era >= 0) {
      this.#context.inFlight.end(this.#era);
      this.#era = -1;
    }
    if (!this.#inFlight) return;
    this.#inFlight = false;
    this.#context.observer.requestEnded();
  }

  /** The slot is free for the next request (a tunnel keeps it until it closes). */
  releaseSlot(): void {
    if (!this.#holdsSlot) return;
    this.#holdsSlot = false;
    this.#context.limiter?.release();
  }

  /** The request is finished: everything released, and its access-log line written once. */
  finished(aborted: boolean): void {
    this.ended();
    this.releaseSlot();
    if (this.#logged || !this.#context.accessLog.enabled) return;
    this.#logged = true;
    const request = this.#request;
    this.#context.accessLog.record({
      method: request.method,
      path: request.url,
      protocol: this.protocol,
      status: this.#status,
      grpcStatus: this.grpcStatus,
      bytesSent: this.#bytesSent,
      durationMs: performance.now() - this.#startedAt,
      upstreamMs: this.#upstreamMs,
      queueMs: this.#context.limiter === undefined ? undefined : (this.#queueMs ?? 0),
      requestId: this.requestId,
      remoteAddr: this.#remoteAddress,
      userAgent: request.header("user-agent"),
      aborted,
    });
  }
}
