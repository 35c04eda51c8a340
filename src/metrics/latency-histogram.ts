// A histogram by status code kept in plain arrays: observing is a few array writes, and prom-client's registry formats it at scrape time.

/** Prometheus' default latency buckets, in seconds. */
export const LATENCY_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

interface Series {
  /** Per bucket (not cumulative), the last one +Inf. */
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

/** One exported sample, in the shape prom-client's registry formats. */
interface Sample {
  readonly value: number;
  readonly labels: Record<string, string | number>;
  readonly metricName: string;
}

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
  readonly #byStatus: Array<Series | undefined> = new Array(600);

  constructor(name: string, help: string) {
    this.name = name;
    this.help = help;
  }

  observe(status: number, seconds: number): void {
    if (!(status >= 100 && status < 600)) return;
    const series = (this.#byStatus[status] ??= { counts: new Float64Array(LATENCY_BUCKETS.length + 1), sum: 0, count: 0 });
    let bucket = 0;
    while (bucket < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[bucket]!) bucket++;
    series.counts[bucket]!++;
    series.sum += seconds;
    series.count++;
  }

  /** What the registry reads on a scrape: cumulative `_bucket`s with `le`, then `_sum` and `_count`, per code. */
  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Sample[] }> {
    const values: Sample[] = [];
    this.#byStatus.forEach((series, status) => {
      if (!series) return;
      const code = String(status);
      let cumulative = 0;
      for (let bucket = 0; bucket <= LATENCY_BUCKETS.length; bucket++) {
        cumulative += series.counts[bucket]!;
        values.push({ value: cumulative, labels: { le: LATENCY_BUCKETS[bucket] ?? "+Inf", code }, metricName: `${this.name}_bucket` });
      }
      values.push({ value: series.sum, labels: { code }, metricName: `${this.name}_sum` });
      values.push({ value: series.count, labels: { code }, metricName: `${this.name}_count` });
    });
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}
