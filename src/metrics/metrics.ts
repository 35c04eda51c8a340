// Prometheus metrics on their own listener (CONTRACT §9): one registry, the observers the proxy, the check and the limiter report to, GET /metrics.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import { Gauge, Registry, collectDefaultMetrics } from "prom-client";
import { formatListenAddress, type ListenAddress } from "../config/listen-address.js";
import type { DrainState } from "../http/drain-state.js";
import { listen } from "../http/listen.js";
import { VERSION } from "../version.js";
import { OverloadMetrics } from "./overload-metrics.js";
import { ReadinessMetrics } from "./readiness-metrics.js";
import { RequestMetrics } from "./request-metrics.js";
import { registerConnectionMetrics } from "./connection-metrics.js";
import type { ClientConnectionCounts } from "../relay/connection-limit.js";
import { MetricsMerge } from "./metrics-merge.js";

export interface MetricsOptions {
  readonly listen: ListenAddress;
  readonly checkNames: readonly string[];
  readonly drain: DrainState;
  readonly log: Logger;
  /** --max-concurrency is on: register the overload metrics (CONTRACT §10). */
  readonly overloadProtection?: boolean;
  /** The listener's client connection counts (CONTRACT §18). */
  readonly connections?: ClientConnectionCounts;
  /** --metrics-merge (CONTRACT §17): the app's loopback exposition URL, served after ours on each scrape. */
  readonly mergeUrl?: string | undefined;
}

/** What the daemon wires: the observers, and the listener's life. */
export interface Metrics {
  readonly proxy: RequestMetrics;
  readonly readiness: ReadinessMetrics;
  /**
   * The limiter's observer; undefined without --max-concurrency, when the queue metrics are not
   * registered at all (they could only ever read 0, and §10's metrics belong to the limiter).
   */
  readonly overload: OverloadMetrics | undefined;
  readonly registry: Registry;
  /** Opens the metrics listener; rejects with a one-line listen error (exit 1). */
  start(): Promise<AddressInfo>;
  close(): Promise<void>;
}

/** prom-client defaults dropped: `sum(nodejs_active_handles)` and so on give the same figures. */
const COUNTER_NAMED_GAUGES = ["nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"] as const;

/**
 * Builds the registry. Only loaded (by a dynamic import in main.ts) when --metrics-listen is
 * given: without it prom-client is never evaluated and the hot path calls a no-op observer.
 */
export function createMetrics(options: MetricsOptions): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // prom-client's totals are gauges named like counters, which `promtool check metrics` (and
  // users linting scrapes in CI) refuse; the per-type gauges beside them sum to the same number.
  for (const name of COUNTER_NAMED_GAUGES) registry.removeSingleMetric(name);
  new Gauge({ name: "readiness_proxy_build_info", help: "1, labelled with the version and the Node runtime.", labelNames: ["version", "node_version"], registers: [registry] }).set(
    { version: VERSION, node_version: process.version },
    1,
  );
  const proxy = new RequestMetrics(registry);
  const readiness = new ReadinessMetrics(registry, options.checkNames, options.drain);
  const overload = options.overloadProtection ? new OverloadMetrics(registry) : undefined;
  if (options.connections !== undefined) registerConnectionMetrics(registry, options.connections);
  const merge = options.mergeUrl === undefined ? undefined : new MetricsMerge(options.mergeUrl, registry, options.log);
  const server = createMetricsServer(registry, merge);
  return {
    proxy,
    readiness,
    overload,
    registry,
    start: async () => {
      const address = await listen(server, options.listen, " (--metrics-listen)");
      options.log.info({ listen: formatListenAddress({ host: options.listen.host, port: address.port }) }, "metrics listening");
      return address;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }).then(() => merge?.close()),
  };
}

/** The factory the daemon calls once it knows its drain flag, check names and whether the limiter is on. */
export function metricsFactory(listenAddress: ListenAddress, log: Logger, mergeUrl?: string) {
  return (parts: { readonly drain: DrainState; readonly checkNames: readonly string[]; readonly overloadProtection?: boolean; readonly connections?: ClientConnectionCounts }): Metrics =>
    createMetrics({ listen: listenAddress, log, mergeUrl, ...parts });
}

/** GET or HEAD /metrics (query ignored); any other path 404, any other method 405. With a merge, the app's families follow ours. */
function createMetricsServer(registry: Registry, merge: MetricsMerge | undefined): Server {
  return createServer({ headersTimeout: 10_000, requestTimeout: 30_000 }, (req, res) => {
    const url = req.url ?? "";
    const path = url.split("?", 1)[0];
    if (path !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("not found: metrics are at /metrics\n");
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain; charset=utf-8" }).end("method not allowed\n");
      return;
    }
    // The app's text first, so that merge_ok and the dropped count in ours describe this scrape.
    const collected = (merge?.appText() ?? Promise.resolve("")).then(async (appText) => joinExpositions(await registry.metrics(), appText));
    collected.then(
      (body) => {
        res.writeHead(200, { "content-type": registry.contentType, "content-length": Buffer.byteLength(body), "cache-control": "no-store" });
        res.end(req.method === "HEAD" ? undefined : body);
      },
      (error: unknown) => {
        res.writeHead(500, { "content-type": "text/plain; charset=utf-8" }).end(`cannot collect metrics: ${error instanceof Error ? error.message : String(error)}\n`);
      },
    );
  });
}

/** Ours, then the app's, with one newline between whatever either ends with. */
function joinExpositions(ours: string, app: string): string {
  if (app === "") return ours;
  return (ours.endsWith("\n") ? ours : `${ours}\n`) + app;
}
