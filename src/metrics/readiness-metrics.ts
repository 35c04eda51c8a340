// The readiness metrics (CONTRACT §9): gauges from the latest check run, socket-table scan counts and durations; a scrape never runs a check.
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import type { DrainState } from "../http/drain-state.js";
import type { SocketTable } from "../procfs/listener-scan.js";
import { SOCKET_TABLES, TCP_TABLES } from "../procfs/listener-scan.js";
import { MAINTENANCE_CHECK, SHUTDOWN_CHECK, type ReadinessReport } from "../readiness/check-results.js";
import type { ReadinessObserver } from "../readiness/readiness-check.js";

/** Implements the readiness check's observer; told of fresh runs only (once per TTL at most). */
export class ReadinessMetrics implements ReadinessObserver {
  #latest: ReadinessReport | undefined;
  readonly #scans: Counter;
  readonly #scanSeconds: Histogram;
  readonly #unreadable: Gauge;
  readonly #unreadableSeen = new Set<SocketTable>();

  constructor(registry: Registry, checkNames: readonly string[], drain: DrainState) {
    const self = this;
    const passing = (name: string): boolean => {
      if (name === SHUTDOWN_CHECK) return !drain.draining;
      if (name === MAINTENANCE_CHECK) return drain.maintenance !== true;
      return self.#latest?.checks.find((check) => check.name === name)?.ok ?? false;
    };
    new Gauge({
      name: "readiness_proxy_ready",
      help: "1 when every check passed in the latest run and the proxy is not draining, else 0 (as /readyz).",
      registers: [registry],
      collect() {
        // Before the first run a configured check counts as failing, like /readyz before its first answer.
        this.set(checkNames.every(passing) ? 1 : 0);
      },
    });
    new Gauge({
      name: "readiness_proxy_check_ok",
      help: "1 when the named check passed in the latest run, else 0.",
      labelNames: ["check"],
      registers: [registry],
      collect() {
        for (const check of checkNames) this.set({ check }, passing(check) ? 1 : 0);
      },
    });
    new Gauge({
      name: "readiness_proxy_draining",
      help: "1 once shutdown has begun.",
      registers: [registry],
      collect() {
        this.set(drain.draining ? 1 : 0);
      },
    });
    this.#scans = new Counter({ name: "readiness_proxy_socket_table_scans_total", help: "Scans of /proc/net/tcp and tcp6 (at most one per cache TTL).", registers: [registry] });
    this.#scanSeconds = new Histogram({
      name: "readiness_proxy_socket_table_scan_duration_seconds",
      help: "Time to read and parse both socket tables.",
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
      registers: [registry],
    });
    this.#unreadable = new Gauge({
      name: "readiness_proxy_socket_table_unreadable",
      help: "1 when the latest scan could not read the table (the listener check then fails open).",
      labelNames: ["table"],
      registers: [registry],
    });
    for (const table of TCP_TABLES) this.#unreadable.set({ table }, 0);
  }

  onScan(durationSeconds: number, unreadableTables: readonly SocketTable[]): void {
    this.#scans.inc();
    this.#scanSeconds.observe(durationSeconds);
    // The TCP tables always have a series; a UDP or unix table gets one once it has been unreadable.
    for (const table of SOCKET_TABLES) {
      const unreadable = unreadableTables.includes(table);
      if (unreadable || TCP_TABLES.includes(table) || this.#unreadableSeen.has(table)) this.#unreadable.set({ table }, unreadable ? 1 : 0);
      if (unreadable) this.#unreadableSeen.add(table);
    }
  }

  onReport(report: ReadinessReport): void {
    this.#latest = report;
  }
}
