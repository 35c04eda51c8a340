// The overload metrics (CONTRACT §10): queue length, queue wait, refusals by reason; plain numbers on the hot path, handed to prom-client only when Prometheus scrapes.
import { Counter, Gauge, type Registry } from "prom-client";
import type { OverloadObserver, RejectReason } from "../overload/overload-observer.js";
import { HistogramSeries, type Sample } from "./histogram-series.js";

/**
 * Seconds. `0` first: most requests under a limit are admitted at once, and `le="0"` counts them,
 * so the share that waited at all is one division. The top buckets reach `--queue-timeout`s
 * sized for LLM servers (30 s and more).
 */
export const QUEUE_WAIT_BUCKETS: readonly number[] = [0, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

const REASONS: readonly RejectReason[] = ["queue_full", "queue_timeout"];

const QUEUE_WAIT = "readiness_proxy_queue_wait_seconds";
const QUEUE_WAIT_HELP = "Time a proxied request waited for a slot under --max-concurrency: 0 when admitted at once; requests refused because the queue was full are not counted.";

/**
 * Implements the limiter's observer. Per call: one number stored, one array slot incremented, or
 * one bucket search; no label object. The prom-client metrics read these in their `collect`
 * hooks (or `get()`), which run only on a scrape.
 */
export class OverloadMetrics implements OverloadObserver {
  readonly enabled = true;
  #queueLength = 0;
  readonly #rejected = new Float64Array(REASONS.length);
  readonly #wait = new HistogramSeries(QUEUE_WAIT_BUCKETS);

  constructor(registry: Registry) {
    const self = this;
    const rejected = this.#rejected;
    new Gauge({
      name: "readiness_proxy_queue_length",
      help: "Requests waiting for a slot under --max-concurrency (not in readiness_proxy_requests_in_flight).",
      registers: [registry],
      collect() {
        this.set(self.#queueLength);
      },
    });
    new Counter({
      name: "readiness_proxy_rejected_requests_total",
      help: "Requests answered 503 overloaded without reaching the app, by reason: queue_full (refused on arrival) or queue_timeout (waited --queue-timeout, or the shutdown ran out).",
      labelNames: ["reason"],
      registers: [registry],
      collect() {
        // Both reasons, zeros included, so rate() has a series from the first scrape.
        this.reset();
        REASONS.forEach((reason, index) => this.inc({ reason }, rejected[index]!));
      },
    });
    const wait = this.#wait;
    registry.registerMetric({
      name: QUEUE_WAIT,
      help: QUEUE_WAIT_HELP,
      type: "histogram",
      aggregator: "sum",
      get: async () => {
        const values: Sample[] = [];
        wait.collect(QUEUE_WAIT, {}, values);
        return { name: QUEUE_WAIT, help: QUEUE_WAIT_HELP, type: "histogram", aggregator: "sum", values };
      },
    } as never);
  }

  queueLength(length: number): void {
    this.#queueLength = length;
  }

  queueWait(seconds: number): void {
    this.#wait.observe(seconds);
  }

  rejected(reason: RejectReason): void {
    this.#rejected[reason === "queue_full" ? 0 : 1]!++;
  }
}
