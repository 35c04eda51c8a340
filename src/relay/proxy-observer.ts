// What the proxy reports about each forwarded request (metrics implement it); the no-op makes the hot path skip even the clock.

/** Why a request to the upstream failed, as metrics count it. */
export type UpstreamErrorReason = "refused" | "reset" | "timeout" | "other" | "idle_timeout" | "max_duration";

/** Told of every forwarded request; health paths are answered elsewhere and never reported. */
export interface ProxyObserver {
  /** False for the no-op: the proxy then reads no clock and attaches no listener. */
  readonly enabled: boolean;
  requestStarted(): void;
  /** The response head went out (the upstream's, or a proxy-made error): status and time since the request began. */
  responseHead(status: number, method: string, seconds: number): void;
  /** The proxy is done with the request: its response was ended, failed, or its client went away. */
  requestEnded(): void;
  upstreamError(reason: UpstreamErrorReason): void;
  /** A refused connect is tried again (--upstream-connect-retry): readiness_proxy_upstream_connect_retries_total. */
  connectRetried(): void;
  /** A WebSocket became a tunnel / a tunnel closed. */
  tunnelOpened(): void;
  tunnelClosed(): void;
  /** A defect of ours was contained to one request or connection (readiness_proxy_internal_errors_total). */
  internalError(): void;
}

function ignore(): void {}

/** Metrics off. */
export const NO_PROXY_OBSERVER: ProxyObserver = {
  enabled: false,
  requestStarted: ignore,
  responseHead: ignore,
  requestEnded: ignore,
  upstreamError: ignore,
  connectRetried: ignore,
  tunnelOpened: ignore,
  tunnelClosed: ignore,
  internalError: ignore,
};

/** The metrics reason of an upstream failure's code (a Node errno, an llhttp HPE_* code, or the head timeout's). */
export function upstreamErrorReason(code: string | undefined): UpstreamErrorReason {
  switch (code) {
    case "ECONNREFUSED":
      return "refused";
    case "ECONNRESET":
    case "EPIPE":
    case "UND_ERR_SOCKET":
      return "reset";
    case "UND_ERR_HEADERS_TIMEOUT":
    case "UND_ERR_CONNECT_TIMEOUT":
    case "ETIMEDOUT":
      return "timeout";
    default:
      return "other";
  }
}
