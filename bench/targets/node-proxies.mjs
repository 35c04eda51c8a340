// Starts the Node proxies under comparison (node-http-proxy, reply-from, readiness-proxy plain and with options) in front of one upstream.
import { startListening, stop } from "../lib/processes.mjs";

/** node-http-proxy with a keep-alive agent, on the runtime the binary embeds. */
export function startHttpProxy({ runtime, here, port, upstreamUrl }) {
  return startListening([runtime, `${here}/targets/http-proxy-server.mjs`, String(port), upstreamUrl], port);
}

/** fastify + @fastify/reply-from, on the runtime the binary embeds. */
export function startReplyFrom({ runtime, here, port, upstreamUrl }) {
  return startListening([runtime, `${here}/targets/reply-from-server.mjs`, String(port), upstreamUrl], port);
}

/**
 * The binary; with `metricsPort`, also `--metrics-listen` there; `flags` are added as given.
 * `logLevel` is warn unless said (the access log is written at info); `stdout` a file descriptor
 * (its output is thrown away by default).
 */
export function startReadinessProxy({ binary, port, upstreamUrl, metricsPort, flags = [], logLevel = "warn", stdout }) {
  const metrics = metricsPort === undefined ? [] : ["--metrics-listen", `127.0.0.1:${metricsPort}`];
  const argv = [binary, "--listen", `127.0.0.1:${port}`, "--upstream", upstreamUrl, "--log-level", logLevel, ...metrics, ...flags];
  return startListening(argv, port, stdout === undefined ? undefined : { stdout });
}

/**
 * Starts several servers at once; if any fails, the ones that started are stopped before the
 * error is thrown again.
 */
export async function startAll(starters) {
  const settled = await Promise.allSettled(starters.map((starter) => starter()));
  const failure = settled.find((outcome) => outcome.status === "rejected");
  if (failure) {
    await Promise.all(settled.filter((outcome) => outcome.status === "fulfilled").map((outcome) => stop(outcome.value)));
    throw failure.reason;
  }
  return settled.map((outcome) => outcome.value);
}

/** Each on its own port, each its own process; resolves once all four accept connections. */
export async function startNodeProxies({ runtime, binary, here, upstreamUrl, ports }) {
  const [httpProxy, replyFrom, readinessProxy, withMetrics] = await startAll([
    () => startHttpProxy({ runtime, here, port: ports.httpProxy, upstreamUrl }),
    () => startReplyFrom({ runtime, here, port: ports.replyFrom, upstreamUrl }),
    () => startReadinessProxy({ binary, port: ports.readinessProxy, upstreamUrl }),
    () => startReadinessProxy({ binary, port: ports.readinessProxyMetrics, upstreamUrl, metricsPort: ports.metricsListener }),
  ]);
  return { httpProxy, replyFrom, readinessProxy, withMetrics };
}
