// The client connection metrics (CONTRACT §18): open connections and idle ones shed at --max-connections, read from the limit's counters on a scrape.
import { Counter, Gauge, type Registry } from "prom-client";
import type { ClientConnectionCounts } from "../relay/connection-limit.js";

/** Registers both; nothing is done per connection, `collect` reads the two numbers. */
export function registerConnectionMetrics(registry: Registry, counts: ClientConnectionCounts): void {
  new Gauge({
    name: "readiness_proxy_client_connections",
    help: "Open client connections on the listener, HTTP/1.1 and HTTP/2 (admin and metrics listeners not counted).",
    registers: [registry],
    collect() {
      this.set(counts.open);
    },
  });
  new Counter({
    name: "readiness_proxy_client_connections_shed_total",
    help: "Idle keep-alive client connections closed to admit another at --max-connections.",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(counts.shed);
    },
  });
}
