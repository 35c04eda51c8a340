// What every exchange of one relay shares, whatever protocols are on its two sides: the upstream's address facts, the error pages, the log and the observer.
import type { Logger } from "pino";
import type { ErrorResponder } from "../http/error-response.js";
import type { ProxyErrorLog } from "./proxy-error-log.js";
import type { ProxyObserver } from "./proxy-observer.js";
import type { StreamGarbage } from "./stream-garbage.js";
import type { AccessLog } from "../access-log/access-log.js";
import type { InFlightRequests } from "./in-flight.js";
import type { ConcurrencyLimiter } from "../overload/concurrency-limiter.js";
import type { StreamDeadlines } from "./stream-deadlines.js";
import type { Timers } from "../timers.js";

/** Built once per relay; exchanges read it and never change it. */
export interface RelayContext {
  /** The upstream URL's path, put in front of every target. */
  readonly pathPrefix: string;
  /** `host:port` of the upstream, the Host of a request that came without one. */
  readonly upstreamHost: string;
  readonly responseHeaderTimeoutMs: number;
  readonly errors: ErrorResponder;
  readonly log: Logger;
  /** Per-request warnings, throttled per kind (an outage must not flood the log). */
  readonly errorLog: ProxyErrorLog;
  /** Replace an upstream 5xx body with the branded page, for browser navigations only. */
  readonly interceptUpstreamErrors: boolean;
  /** Metrics, or NO_PROXY_OBSERVER (then not even the clock is read). */
  readonly observer: ProxyObserver;
  /** Counts streamed body bytes and asks for a collection now and then. */
  readonly garbage: StreamGarbage;
  /** `--max-concurrency`; undefined when unlimited (then no slot is taken at all). */
  readonly limiter: ConcurrencyLimiter | undefined;
  /** `--access-log`, or NO_ACCESS_LOG. */
  readonly accessLog: AccessLog;
  /** --idle-timeout and --max-request-duration (CONTRACT §15); undefined when both are off (then nothing is watched). */
  readonly deadlines?: StreamDeadlines | undefined;
  /** --max-connection-age and its grace, in ms (0: off). */
  readonly connectionAge?: { readonly maxAgeMs: number; readonly graceMs: number } | undefined;
  /** A defect of ours contained to one request or connection: `internal error` (throttled, with the stack) and the metric. */
  readonly reportFault: (error: unknown) => void;
  /** Proxied requests from admission to end: what a drain waits for (/wait-for-drain) and /status counts. */
  readonly inFlight: InFlightRequests;
  /** The daemon's clock and timers: the listeners' sweep, connection ages and their grace run on them (tests move them by hand). */
  readonly timers: Timers;
  /** --upstream-connect-retry in ms; 0: a refused connect is the 502 at once (CONTRACT §17). */
  readonly connectRetryMs?: number;
}
