// The node:http server: health paths answered here, every other request forwarded to the upstream.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { Duplex } from "node:stream";
import type { DrainState, HealthEndpoints } from "./health.js";
import { matchHealthPath } from "./health.js";
import type { ReverseProxy } from "./proxy.js";

/** Slow clients may not hold a socket open by dribbling headers (Go's ReadHeaderTimeout, same value). */
export const HEADERS_TIMEOUT_MS = 10_000;
/**
 * Longer than the idle timeout of the load balancers in front (AWS ALB 60 s, Google's 600 s),
 * so they, not we, close idle connections: otherwise a request can race our close and fail.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 620_000;

export interface ProxyServerParts {
  readonly health: HealthEndpoints;
  readonly proxy: ReverseProxy;
  readonly drain: DrainState;
  /** Takes over connections that ask to switch protocols (WebSocket). */
  readonly upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
}

/** Creates (does not start) the one listener's server. */
export function createProxyServer({ health, proxy, drain, upgrade }: ProxyServerParts): Server {
  const server = createServer(
    {
      headersTimeout: HEADERS_TIMEOUT_MS,
      // No whole-request deadline: uploads and streams may take minutes; the header timeout guards slowloris.
      requestTimeout: 0,
      // How often the header deadline is checked (Node's default of 30 s would stretch 10 s to 40).
      connectionsCheckingInterval: 1_000,
      noDelay: true,
    },
    (req, res) => {
      // While draining, every response asks the client to reconnect (to another replica).
      if (drain.draining) res.setHeader("connection", "close");
      const healthPath = matchHealthPath(req.method, req.url);
      if (healthPath === "liveness") health.liveness(req, res);
      else if (healthPath === "readiness") health.readiness(req, res);
      else if (healthPath !== "single check" || !health.singleCheck(req, res)) proxy.forward(req, res);
    },
  );
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.on("upgrade", upgrade);
  return server;
}
