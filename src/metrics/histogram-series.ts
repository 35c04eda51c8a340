// One histogram series kept in a Float64Array: observing is a bucket search and three writes; the samples are built only when Prometheus scrapes.

/** One exported sample, in the shape prom-client's registry formats. */
export interface Sample {
  readonly value: number;
  readonly labels: Record<string, string | number>;
  readonly metricName: string;
}

/** Buckets, sum and count of one label set. prom-client's own Histogram hashes its label object on every observe; this does no label work until a scrape. */
export class HistogramSeries {
  readonly #buckets: readonly number[];
  /** Per bucket (not cumulative), the last one +Inf. */
  readonly #counts: Float64Array;
  #sum = 0;
  #count = 0;

  /** `buckets`: upper bounds, ascending, without +Inf. */
  constructor(buckets: readonly number[]) {
    this.#buckets = buckets;
    this.#counts = new Float64Array(buckets.length + 1);
  }

  observe(value: number): void {
    const buckets = this.#buckets;
    let bucket = 0;
    while (bucket < buckets.length && value > buckets[bucket]!) bucket++;
    this.#counts[bucket]!++;
    this.#sum += value;
    this.#count++;
  }

  /** Appends cumulative `_bucket`s (`le` first, then `labels`), then `_sum` and `_count`, as prom-client's registry reads them. */
  collect(name: string, labels: Record<string, string>, into: Sample[]): void {
    let cumulative = 0;
    for (let bucket = 0; bucket <= this.#buckets.length; bucket++) {
      cumulative += this.#counts[bucket]!;
      into.push({ value: cumulative, labels: { le: this.#buckets[bucket] ?? "+Inf", ...labels }, metricName: `${name}_bucket` });
    }
    into.push({ value: this.#sum, labels, metricName: `${name}_sum` });
    into.push({ value: this.#count, labels, metricName: `${name}_count` });
  }
}
