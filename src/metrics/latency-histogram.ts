// A histogram by status code kept in plain arrays: observing is a few array writes, and prom-client's registry formats it at scrape time.
import { HistogramSeries, type Sample } from "./histogram-series.js";

/** Prometheus' default latency buckets, in seconds. */
export const LATENCY_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * A `{code}` histogram that prom-client's Registry accepts as a metric (it formats any object
 * with `name`, `help`, `type` and `get()`). prom-client's own Histogram hashes the label object
 * on every observe; this one indexes an array by status code, so the proxy's hot path does no
 * label work at all.
 */
export class LatencyHistogram {
  readonly type = "histogram";
  readonly aggregator = "sum";
  readonly name: string;
  readonly help: string;
  readonly #byStatus: Array<HistogramSeries | undefined> = new Array(600);

  constructor(name: string, help: string) {
    this.name = name;
    this.help = help;
  }

  observe(status: number, seconds: number): void {
    if (!(status >= 100 && status < 600)) return;
    (this.#byStatus[status] ??= new HistogramSeries(LATENCY_BUCKETS)).observe(seconds);
  }

  /** What the registry reads on a scrape: cumulative `_bucket`s with `le`, then `_sum` and `_count`, per code. */
  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Sample[] }> {
    const values: Sample[] = [];
    this.#byStatus.forEach((series, status) => series?.collect(this.name, { code: String(status) }, values));
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}
