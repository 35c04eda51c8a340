// What one access-log line is made of: the record the relay hands over once a proxied request has finished.
/** What the relay knows once a proxied request has finished (answered, failed, or its client gone). */
export interface AccessLogEntry {
  readonly method: string;
  /**
   * The request target exactly as the client sent it, origin-form (`/v1/chat?stream=1`) or
   * absolute-form (`http://host/v1/chat?stream=1`), not decoded. The access log strips the query
   * itself (everything from the first `?`), so no caller can forget to: query strings carry tokens.
   */
  readonly path: string;
  /** `HTTP/1.1` or `HTTP/2`: the client's protocol, on every line. */
  readonly protocol: string;
  /** As sent to the client; 0 when nothing was sent (the client left first). */
  readonly status: number;
  /** The `grpc-status` the answer carried (in its head or trailers); undefined when it carried none. */
  readonly grpcStatus?: number | undefined;
  /** Response body bytes sent to the client (not the head). */
  readonly bytesSent: number;
  /** From the request's start to the end of its response (or to the abort). */
  readonly durationMs: number;
  /** From the request's start to the upstream's response head; undefined for a proxy-made answer or none at all. */
  readonly upstreamMs?: number | undefined;
  /** Time in the limiter's queue: give it on every request when --max-concurrency is on (0 when admitted at once), else undefined. */
  readonly queueMs?: number | undefined;
  /** The same id as the error pages and `X-Request-Id`. */
  readonly requestId: string;
  /** The trace id of a valid W3C `traceparent` on the request (src/access-log/trace-context.ts); undefined for none or an invalid one. */
  readonly traceId?: string | undefined;
  /** Refused connects tried again (--upstream-connect-retry, CONTRACT §17): on every line when it is on, else undefined. */
  readonly connectRetries?: number | undefined;
  /**
   * The peer's IP as `socket.remoteAddress` gives it (no port). Read it when the connection is
   * accepted: Node forgets it once the socket is destroyed. `::ffff:` is stripped from IPv4-mapped
   * addresses here.
   */
  readonly remoteAddr: string | undefined;
  readonly userAgent?: string | undefined;
  /** The client went away before its response ended (while queued included). */
  readonly aborted?: boolean | undefined;
  /** Ended by --idle-timeout (`idle`) or --max-request-duration (`duration`), CONTRACT §15. */
  readonly timeout?: "idle" | "duration" | undefined;
}
