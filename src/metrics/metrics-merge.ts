// --metrics-merge (CONTRACT §17): each scrape fetches the app's exposition (2 s, 8 MiB at most), drops the families whose names clash with ours, counts them, and serves the rest after ours; failing and recovering logged once each.
import { StringDecoder } from "node:string_decoder";
import type { Logger } from "pino";
import { Counter, Gauge, type Registry } from "prom-client";
import { Agent, request } from "undici";
import { errorCode } from "../errors.js";
import { claimedNames, ExpositionReader, type ExpositionFamily, type MetricType } from "./exposition-reader.js";

/** The whole fetch, connect to last octet: a slow app never holds a scrape longer. */
export const MERGE_TIMEOUT_MS = 2_000;
/** The most of the app's text read; past it ours are served alone. */
export const MERGE_MAX_OCTETS = 8 * 1024 * 1024;

export interface MergeLimits {
  readonly timeoutMs: number;
  readonly maxOctets: number;
}

/** Fetches and filters the app's text for one scrape; its two metrics live in our registry. */
export class MetricsMerge {
  private readonly ok: Gauge;
  private readonly dropped: Counter;
  // Its own small pool: the scrape path shares nothing with the proxy's or the checks' connections.
  private readonly agent = new Agent({ connections: 2, keepAliveTimeout: 10_000 });
  /** The latest scrape's outcome, so each change is logged once and not every scrape. */
  private failing: boolean | undefined;

  constructor(
    private readonly url: string,
    private readonly registry: Registry,
    private readonly log: Logger,
    private readonly limits: MergeLimits = { timeoutMs: MERGE_TIMEOUT_MS, maxOctets: MERGE_MAX_OCTETS },
  ) {
    this.ok = new Gauge({ name: "readiness_proxy_metrics_merge_ok", help: "1 when the app's metrics were fetched and parsed at the latest scrape (--metrics-merge), else 0.", registers: [registry] });
    this.dropped = new Counter({
      name: "readiness_proxy_metrics_merge_dropped_families_total",
      help: "The app's metric families left out of a scrape because their names clash with the proxy's own (--metrics-merge).",
      registers: [registry],
    });
  }

  /** The app's kept families as text (ending in a newline), or "" when it could not be fetched or read; never rejects. */
  async appText(): Promise<string> {
    const read = await this.fetch().catch((error: unknown) => ({ ok: false as const, error: describeFailure(error, this.limits.timeoutMs) }));
    if (!read.ok) {
      this.ok.set(0);
      if (this.failing !== true) this.log.warn({ url: this.url, reason: read.error }, "metrics merge failing; serving ours alone");
      this.failing = true;
      return "";
    }
    if (this.failing === true) this.log.info({ url: this.url }, "metrics merge passing");
    this.failing = false;
    const ours = this.ourNames();
    let text = "";
    let dropped = 0;
    for (const family of read.families) {
      if ([...family.claimedNames].some((name) => ours.has(name))) dropped++;
      else if (family.lines.length > 0) text += family.lines.join("\n") + "\n";
    }
    if (dropped > 0) this.dropped.inc(dropped);
    this.ok.set(1);
    return text;
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  /** Every sample name our registry may write: a clash on any of them would make two families of one name. */
  private ourNames(): Set<string> {
    const names = new Set<string>();
    for (const metric of this.registry.getMetricsAsArray()) {
      const type = String((metric as { type?: unknown }).type ?? "untyped") as MetricType;
      for (const name of claimedNames(metric.name, type)) names.add(name);
    }
    return names;
  }

  private async fetch(): Promise<{ readonly ok: true; readonly families: readonly ExpositionFamily[] } | { readonly ok: false; readonly error: string }> {
    const signal = AbortSignal.timeout(this.limits.timeoutMs);
    const response = await request(this.url, { dispatcher: this.agent, signal, headers: { accept: "text/plain;version=0.0.4" } });
    // A body cut short (the bound, the deadline) errors as it is destroyed: nothing to report, merge_ok says it.
    response.body.on("error", () => {});
    if (response.statusCode < 200 || response.statusCode > 299) {
      response.body.destroy();
      return { ok: false, error: `status ${response.statusCode}` };
    }
    const reader = new ExpositionReader();
    const decoder = new StringDecoder("utf8");
    let octets = 0;
    // Read and parsed a chunk at a time: the 8 MiB bound holds while reading, and no long synchronous pass.
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      octets += chunk.length;
      if (octets > this.limits.maxOctets) {
        response.body.destroy();
        return { ok: false, error: `more than ${this.limits.maxOctets} octets` };
      }
      reader.push(decoder.write(chunk));
    }
    reader.push(decoder.end());
    const result = reader.end();
    return result.ok ? result : { ok: false, error: `not Prometheus text format: ${result.error}` };
  }
}

/** `connection refused`, `timeout after 2s`: what an operator acts on, the URL being on the same line. */
function describeFailure(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) return `timeout after ${timeoutMs / 1000}s`;
  switch (errorCode(error)) {
    case "ECONNREFUSED":
      return "connection refused";
    case "ECONNRESET":
    case "UND_ERR_SOCKET":
      return "connection reset";
    default:
      return error instanceof Error ? error.message : String(error);
  }
}
