// What one proxied request reports as it goes: its concurrency slot, the metrics observer's calls, and its access-log line at the end.
import { traceIdOf } from "../access-log/trace-context.js";
import { ConnectRetry } from "./connect-retry.js";
import { withoutQuery, type AccessLogEntry } from "../access-log/access-log.js";
import { requestIdOf } from "../http/request-id.js";
import type { RequestView } from "../http/response-writer.js";
import type { QueuedRequest } from "../overload/concurrency-limiter.js";
import type { RelayContext } from "./relay-context.js";
import type { DeadlineKind, Watch, WatchedExchange } from "./stream-deadlines.js";

/** How an exchange obeys a deadline of §15: it ends itself (a 504 before the head, else a cut both ways). */
export interface DeadlineTarget {
  endForDeadline(kind: DeadlineKind): void;
}

/**
 * The one entry every finished request's line is read from (AccessLog.record reads it at once
 * and keeps nothing): filled in place, so a line costs no object, and its durations no number
 * boxes (V8 updates a double field in place). Every field is set each time.
 */
const ENTRY: { -readonly [Field in keyof AccessLogEntry]: AccessLogEntry[Field] } = {
  method: "",
  path: "",
  protocol: "",
  status: 0,
  grpcStatus: undefined,
  bytesSent: 0,
  // Not 0: the field holds doubles from the start (a small integer first would change its shape at the first line).
  durationMs: 0.5,
  upstreamMs: undefined,
  queueMs: undefined,
  requestId: "",
  traceId: undefined,
  connectRetries: undefined,
  remoteAddr: undefined,
  userAgent: undefined,
  aborted: false,
  timeout: undefined,
};

/** The metric's reason for each deadline. */
const DEADLINE_REASONS = { idle: "idle_timeout", duration: "max_duration" } as const;

/**
 * One per proxied request. Every report is made once, whatever order the exchange ends in
 * (answered, failed, client gone, queued and refused). With metrics, the limiter and the
 * access log all off, no clock is read.
 */
export class RequestRecord implements WatchedExchange {
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
  /** Request body bytes sent on; with #bytesSent, the activity the deadlines' sweep reads. */
  #bytesReceived = 0;
  #deadlineTarget: DeadlineTarget | undefined;
  #deadlineWatch: Watch | undefined;
  #timeout: DeadlineKind | undefined;
  /** The request is all sent and its head has not come: the head timeout rules, not the idle one. */
  #awaitingHead = false;
  #tunnel = false;
  /** Made at arrival when --upstream-connect-retry is on: the window runs from here. */
  readonly connectRetry: ConnectRetry | undefined;

  constructor(context: RelayContext, request: RequestView, remoteAddress: string | undefined, protocol: "HTTP/1.1" | "HTTP/2" = "HTTP/1.1") {
    this.#context = context;
    this.#request = request;
    this.#remoteAddress = remoteAddress;
    this.protocol = protocol;
    this.#timed = context.observer.enabled || context.accessLog.enabled;
    this.#startedAt = this.#timed ? performance.now() : 0;
    this.connectRetry = context.connectRetryMs ? new ConnectRetry(context.connectRetryMs) : undefined;
  }

  /** The id of the error pages, `X-Request-Id` and the access log: the client's own when sane, else one made once. */
  get requestId(): string {
    return (this.#requestId ??= requestIdOf(this.#request));
  }

  /**
   * Sent on to the app (at once, or after `queueMs` in the limiter's queue, which gave it `slot`):
   * in flight from here, and watched by --idle-timeout and --max-request-duration when they are on.
   */
  admitted(slot: boolean, queueMs: number | undefined, target?: DeadlineTarget): void {
    this.#holdsSlot = slot;
    this.#queueMs = queueMs;
    this.#era = this.#context.inFlight.begin();
    const deadlines = this.#context.deadlines;
    if (deadlines !== undefined && target !== undefined) {
      this.#deadlineTarget = target;
      this.#deadlineWatch = deadlines.watch(this);
    }
    if (this.#context.observer.enabled) {
      this.#context.observer.requestStarted();
      this.#inFlight = true;
    }
  }

  /** Its client left (or a fault ended it) while queued: it leaves the queue, and its line says how long it waited. */
  leftQueue(queued: QueuedRequest): void {
    queued.cancel();
    this.refused(queued.waitedMs);
  }

  /** Never sent on: refused by the limiter, or timed out in its queue after `queueMs`. */
  refused(queueMs: number): void {
    this.#queueMs = queueMs;
  }

  /** The upstream's response head came. */
  upstreamHead(status: number): void {
    this.#awaitingHead = false;
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

  /** Request body bytes went on to the app (or a tunnel's bytes from the client). */
  bodyReceived(bytes: number): void {
    this.#bytesReceived += bytes;
  }

  /** The whole request is with the app: until its head comes, --response-header-timeout rules. */
  requestSent(): void {
    this.awaitingHead(true);
  }

  /**
   * Whether --response-header-timeout rules now instead of the idle timeout: while the app's
   * connection is being made (a black-holed app is a 504, not a cut), and once the request is all
   * sent; not while an upload flows. No effect once the head came.
   */
  awaitingHead(waiting: boolean): void {
    if (this.#status === 0) this.#awaitingHead = waiting;
  }

  /** A WebSocket is open: --idle-timeout still applies to it, --max-request-duration does not. */
  tunnelOpened(): void {
    this.#tunnel = true;
    this.#awaitingHead = false;
  }

  get activity(): number {
    return this.#bytesSent + this.#bytesReceived;
  }

  get idleApplies(): boolean {
    return !this.#awaitingHead;
  }

  get durationApplies(): boolean {
    return !this.#tunnel;
  }

  /** The deadlines' sweep found it past a limit: counted, logged (throttled), then the exchange ends itself. */
  deadlineReached(kind: DeadlineKind): void {
    this.#timeout = kind;
    this.#context.observer.upstreamError(DEADLINE_REASONS[kind]);
    const request = this.#request;
    this.#context.errorLog.warn(kind === "idle" ? "idle timeout: exchange ended" : "max request duration: exchange ended", {
      requestId: this.requestId,
      method: request.method,
      url: withoutQuery(request.url),
      timeout: kind,
      headSent: this.#status !== 0,
    });
    this.#deadlineTarget?.endForDeadline(kind);
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
    if (this.#deadlineWatch !== undefined) {
      this.#context.deadlines?.unwatch(this.#deadlineWatch);
      this.#deadlineWatch = undefined;
      this.#deadlineTarget = undefined;
    }
    if (this.#logged || !this.#context.accessLog.enabled) return;
    this.#logged = true;
    const request = this.#request;
    const entry = ENTRY;
    entry.method = request.method;
    entry.path = request.url;
    entry.protocol = this.protocol;
    entry.status = this.#status;
    entry.grpcStatus = this.grpcStatus;
    entry.bytesSent = this.#bytesSent;
    entry.durationMs = performance.now() - this.#startedAt;
    entry.upstreamMs = this.#upstreamMs;
    entry.queueMs = this.#context.limiter === undefined ? undefined : (this.#queueMs ?? 0);
    entry.requestId = this.requestId;
    // Two traceparent lines are one comma list, which no valid header is (W3C's duplicated-header case).
    entry.traceId = traceIdOf(request.joined("traceparent"));
    entry.connectRetries = this.connectRetry?.count;
    entry.remoteAddr = this.#remoteAddress;
    entry.userAgent = request.header("user-agent");
    // Ended by a deadline of ours, not by the client leaving.
    entry.aborted = aborted && this.#timeout === undefined;
    entry.timeout = this.#timeout;
    this.#context.accessLog.record(entry);
  }
}
