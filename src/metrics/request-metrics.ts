// The proxy's metrics (CONTRACT §9): counted in plain arrays on the hot path, handed to prom-client only when Prometheus scrapes.
import { Counter, Gauge, type Registry } from "prom-client";
import type { ProxyObserver, UpstreamErrorReason } from "../relay/proxy-observer.js";
import { LatencyHistogram } from "./latency-histogram.js";

/** The `method` label's values: the standard methods, anything else `OTHER` (label values stay bounded). */
const METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH", "OTHER"] as const;
const OTHER = METHODS.length - 1;
const REASONS: readonly UpstreamErrorReason[] = ["refused", "reset", "timeout", "other", "idle_timeout", "max_duration"];

/** A switch over string constants: cheaper per request than a search of the list. */
function methodIndex(method: string): number {
  switch (method) {
    case "GET":
      return 0;
    case "HEAD":
      return 1;
    case "POST":
      return 2;
    case "PUT":
      return 3;
    case "DELETE":
      return 4;
    case "CONNECT":
      return 5;
    case "OPTIONS":
      return 6;
    case "TRACE":
      return 7;
    case "PATCH":
      return 8;
    default:
      return OTHER;
  }
}

/**
 * Implements the proxy's observer. Per request: one increment of an array slot found by status
 * and method index, one histogram slot, two gauge counts; no label object, no hashing. The
 * prom-client metrics read these arrays in their `collect` hook, which runs only on a scrape.
 */
export class RequestMetrics implements ProxyObserver {
  readonly enabled = true;
  readonly #requests = new Float64Array(600 * METHODS.length);
  readonly #errors = new Float64Array(REASONS.length);
  readonly #latency = new LatencyHistogram("readiness_proxy_request_duration_seconds", "Time from the request's start to the response head (the upstream's or the proxy's own error), by status code.");
  #inFlight = 0;
  #tunnels = 0;
  #internalErrors = 0;
  #connectRetries = 0;

  constructor(registry: Registry) {
    const requests = this.#requests;
    const errors = this.#errors;
    new Counter({
      name: "readiness_proxy_requests_total",
      help: "Proxied requests by final status code and method (health paths excluded).",
      labelNames: ["code", "method"],
      registers: [registry],
      collect() {
        this.reset();
        for (let slot = 0; slot < requests.length; slot++) {
          const count = requests[slot]!;
          if (count > 0) this.inc({ code: String(Math.floor(slot / METHODS.length)), method: METHODS[slot % METHODS.length]! }, count);
        }
      },
    });
    new Counter({
      name: "readiness_proxy_upstream_errors_total",
      help: "Requests the upstream failed before a response head, by reason; idle_timeout and max_duration: exchanges ended by --idle-timeout or --max-request-duration.",
      labelNames: ["reason"],
      registers: [registry],
      collect() {
        // Every reason, zeros included, so rate() has a series from the first scrape.
        this.reset();
        REASONS.forEach((reason, index) => this.inc({ reason }, errors[index]!));
      },
    });
    registry.registerMetric(this.#latency as never);
    const self = this;
    new Gauge({
      name: "readiness_proxy_requests_in_flight",
      help: "Proxied requests the proxy has not finished yet (answered, failed, or their client gone).",
      registers: [registry],
      collect() {
        this.set(self.#inFlight);
      },
    });
    new Counter({
      name: "readiness_proxy_internal_errors_total",
      help: "Defects of the proxy's own contained to one request or connection (the process kept serving).",
      registers: [registry],
      collect() {
        this.reset();
        this.inc(self.#internalErrors);
      },
    });
    new Counter({
      name: "readiness_proxy_upstream_connect_retries_total",
      help: "Refused connects to the upstream tried again by --upstream-connect-retry (nothing of those requests had been sent).",
      registers: [registry],
      collect() {
        this.reset();
        this.inc(self.#connectRetries);
      },
    });
    new Gauge({
      name: "readiness_proxy_upgraded_connections",
      help: "Open WebSocket tunnels.",
      registers: [registry],
      collect() {
        this.set(self.#tunnels);
      },
    });
  }

  requestStarted(): void {
    this.#inFlight++;
  }

  responseHead(status: number, method: string, seconds: number): void {
    if (status >= 100 && status < 600) this.#requests[status * METHODS.length + methodIndex(method)]!++;
    this.#latency.observe(status, seconds);
  }

  requestEnded(): void {
    this.#inFlight--;
  }

  upstreamError(reason: UpstreamErrorReason): void {
    this.#errors[REASONS.indexOf(reason)]!++;
  }

  connectRetried(): void {
    this.#connectRetries++;
  }

  tunnelOpened(): void {
    this.#tunnels++;
  }

  tunnelClosed(): void {
    this.#tunnels--;
  }

  internalError(): void {
    this.#internalErrors++;
  }
}
