// Starts the Node proxies under comparison (node-http-proxy, reply-from, readiness-proxy without and with metrics) in front of one upstream.
import { start, waitForPort } from "../lib/processes.mjs";

/** Each on its own port, each its own process; resolves once all three accept connections. */
export async function startNodeProxies({ runtime, binary, here, upstreamUrl, ports }) {
  const httpProxy = start([runtime, `${here}/targets/http-proxy-server.mjs`, String(ports.httpProxy), upstreamUrl]);
  const replyFrom = start([runtime, `${here}/targets/reply-from-server.mjs`, String(ports.replyFrom), upstreamUrl]);
  const readinessProxy = start([binary, "--listen", `127.0.0.1:${ports.readinessProxy}`, "--upstream", upstreamUrl, "--log-level", "warn"]);
  const withMetrics = start([
    binary, "--listen", `127.0.0.1:${ports.readinessProxyMetrics}`, "--upstream", upstreamUrl, "--log-level", "warn",
    "--metrics-listen", `127.0.0.1:${ports.metricsListener}`,
  ]);
  await Promise.all([ports.httpProxy, ports.replyFrom, ports.readinessProxy, ports.readinessProxyMetrics].map((port) => waitForPort(port)));
  return { httpProxy, replyFrom, readinessProxy, withMetrics };
}
