// The access log (CONTRACT §11): one `request` line per finished proxied request, written by the process logger through its asynchronous destination.
import type { Logger } from "pino";

/** What the relay knows once a proxied request has finished (answered, failed, or its client gone). */
export interface AccessLogEntry {
  readonly method: string;
  /**
   * The request target exactly as the client sent it, origin-form (`/v1/chat?stream=1`) or
   * absolute-form (`http://host/v1/chat?stream=1`), not decoded. The access log strips the query
   * itself (everything from the first `?`), so no caller can forget to: query strings carry tokens.
   */
  readonly path: string;
  /** As sent to the client; 0 when nothing was sent (the client left first). */
  readonly status: number;
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
  /**
   * The peer's IP as `socket.remoteAddress` gives it (no port). Read it when the connection is
   * accepted: Node forgets it once the socket is destroyed. `::ffff:` is stripped from IPv4-mapped
   * addresses here.
   */
  readonly remoteAddr: string | undefined;
  readonly userAgent?: string | undefined;
  /** The client went away before its response ended (while queued included). */
  readonly aborted?: boolean | undefined;
  /** `HTTP/1.1` or `HTTP/2`: the protocol the client spoke (CONTRACT §13). */
  readonly protocol?: "HTTP/1.1" | "HTTP/2" | undefined;
  /** The answer's `grpc-status`, where it carried one. */
  readonly grpcStatus?: number | undefined;
}

/** Where the relay reports finished requests. */
export interface AccessLog {
  /** False for the no-op: the relay may then skip gathering an entry at all. */
  readonly enabled: boolean;
  /** Logs one line; the entry is read synchronously and not kept (a caller may reuse one object per connection). */
  record(entry: AccessLogEntry): void;
}

/** Access log off, or the log level above info. */
export const NO_ACCESS_LOG: AccessLog = { enabled: false, record() {} };

/**
 * The access log for `--access-log`, writing through `log` (the process logger: same stdout,
 * same asynchronous destination, so lines never interleave and are flushed by its end()). It is
 * decided once here whether lines are written at all: with `--log-level warn` or above, or
 * without the flag, the caller gets the no-op and pays nothing per request.
 */
export function createAccessLog(log: Logger, enabled: boolean): AccessLog {
  return enabled && log.isLevelEnabled("info") ? new PinoAccessLog(log) : NO_ACCESS_LOG;
}

class PinoAccessLog implements AccessLog {
  readonly enabled = true;
  readonly #log: Logger;

  constructor(log: Logger) {
    this.#log = log;
  }

  record(entry: AccessLogEntry): void {
    // One object of a fixed shape per line; pino skips the undefined fields, so optional ones cost no branch here.
    this.#log.info(
      {
        method: entry.method,
        path: withoutQuery(entry.path),
        status: entry.status,
        bytesSent: entry.bytesSent,
        durationMs: roundToMicroseconds(entry.durationMs),
        upstreamMs: entry.upstreamMs === undefined ? undefined : roundToMicroseconds(entry.upstreamMs),
        queueMs: entry.queueMs === undefined ? undefined : roundToMicroseconds(entry.queueMs),
        requestId: entry.requestId,
        remoteAddr: peerIp(entry.remoteAddr),
        userAgent: entry.userAgent,
        aborted: entry.aborted === true ? true : undefined,
        protocol: entry.protocol ?? "HTTP/1.1",
        grpcStatus: entry.grpcStatus,
      },
      "request",
    );
  }
}

/** The target up to its first `?`: a path (or, absolute-form, scheme, authority and path) as sent. */
export function withoutQuery(target: string): string {
  const query = target.indexOf("?");
  return query < 0 ? target : target.slice(0, query);
}

/** Milliseconds to 3 decimals (1 µs): finer is noise from the clock and the event loop, and longer numbers cost bytes per line. */
function roundToMicroseconds(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

/** `::ffff:10.0.0.7` (an IPv4 peer on a dual-stack listener) as `10.0.0.7`, the form operators grep for; any other address as is. */
export function peerIp(address: string | undefined): string | undefined {
  return address !== undefined && address.startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address;
}
