// The contenders side by side: the upstream nginx and each proxy in front of it, each its own process; a peer that cannot run here is left out with the reason.
import { openLogPipe } from "../lib/log-pipe.mjs";
import { childPids, stop } from "../lib/processes.mjs";
import { startProxyNginx, startUpstreamNginx } from "./nginx.mjs";
import { startHttpProxy, startReadinessProxy, startReplyFrom } from "./node-proxies.mjs";
import { buildGoReverseProxy, missingCommand, startCaddy, startGoReverseProxy, startHaproxy } from "./peers.mjs";

export const OURS = "readiness-proxy (binary)";
export const OURS_WITH_METRICS = "readiness-proxy (binary, --metrics-listen)";
export const OURS_WITH_LIMIT = "readiness-proxy (binary, --max-concurrency 1000)";
export const OURS_WITH_ACCESS_LOG = "readiness-proxy (binary, --access-log to a FIFO)";
export const NGINX = "nginx proxy (1 worker, keep-alive)";
export const DIRECT = "direct (nginx upstream)";
export const BASELINE = "readiness-proxy (--baseline binary)";

/**
 * In rotation order. `requires` names a command and its Debian package: without it the peer is
 * left out (printed, and listed under the table), never silently. The rest must start.
 * `logPipe`: its stdout is a FIFO this process drains (lib/log-pipe.mjs), given as `logPipe.fd`.
 */
const CONTENDERS = [
  { key: "nginx", name: NGINX, start: ({ port, upstreamPort }) => startProxyNginx(port, upstreamPort).then((nginx) => nginx.child) },
  { key: "haproxy", name: "HAProxy (nbthread 1, http-reuse always)", requires: ["haproxy", "haproxy"], start: startHaproxy },
  { key: "caddy", name: "Caddy reverse_proxy (GOMAXPROCS=1)", requires: ["caddy", "caddy"], start: startCaddy },
  {
    key: "go",
    name: "Go httputil.ReverseProxy (GOMAXPROCS=1)",
    requires: ["go", "golang-go"],
    start: (options) => startGoReverseProxy({ ...options, program: buildGoReverseProxy(options) }),
  },
  { key: "httpProxy", name: "node-http-proxy (keep-alive agent)", start: startHttpProxy },
  { key: "replyFrom", name: "fastify + @fastify/reply-from", start: startReplyFrom },
  { key: "ours", name: OURS, start: startReadinessProxy },
  { key: "oursMetrics", name: OURS_WITH_METRICS, start: (options) => startReadinessProxy({ ...options, metricsPort: options.ports.metricsListener }) },
  // The limiter on but never reached at 50 connections: every request passes through it, the queue stays empty.
  { key: "oursLimit", name: OURS_WITH_LIMIT, start: (options) => startReadinessProxy({ ...options, flags: ["--max-concurrency", "1000"] }) },
  // At info (warn would silence the access log); the other info lines come only at start and stop.
  {
    key: "oursAccessLog",
    name: OURS_WITH_ACCESS_LOG,
    logPipe: true,
    start: (options) => startReadinessProxy({ ...options, flags: ["--access-log"], logLevel: "info", stdout: options.logPipe.fd }),
  },
  // Another build (today's, say) beside this one, so "at least today's" is measured in one run.
  { key: "baseline", name: BASELINE, start: (options) => startReadinessProxy({ ...options, binary: options.baseline }) },
];

/** The process and its children (an nginx master's worker): CPU and memory are summed over them. */
const processTree = (child) => () => [child.pid, ...childPids(child.pid)];

/**
 * Starts the upstream nginx ("direct") and the contenders named in `keys`, one after the other,
 * on `ports[key]`. Resolves to `{ targets, leftOut, stop }`: targets in rotation order, each
 * `{ key, name, port, child, pids() }`, plus `loggedBytes()` (read from its stdout so far) for one
 * with a log pipe; leftOut `{ name, reason }`. If a contender that must run fails, everything
 * started is stopped and the error is thrown.
 */
export async function startLineup({ keys, ports, runtime, binary, baseline, here, root }) {
  const upstreamUrl = `http://127.0.0.1:${ports.direct}`;
  const upstream = await startUpstreamNginx(ports.direct);
  const targets = [{ key: "direct", name: DIRECT, port: ports.direct, child: upstream.child, pids: upstream.pids }];
  const leftOut = [];
  const logPipes = [];
  const stopAll = async () => {
    await Promise.all(targets.map((target) => stop(target.child)));
    for (const logPipe of logPipes) logPipe.close();
  };
  try {
    for (const contender of CONTENDERS.filter(({ key }) => keys.includes(key))) {
      const port = ports[contender.key];
      const missing = contender.requires && missingCommand(...contender.requires);
      if (missing) {
        leftOut.push({ name: contender.name, reason: missing });
        continue;
      }
      const logPipe = contender.logPipe ? openLogPipe() : undefined;
      if (logPipe) logPipes.push(logPipe);
      try {
        const child = await contender.start({ port, upstreamPort: ports.direct, upstreamUrl, ports, runtime, binary, baseline, here, root, logPipe });
        targets.push({ key: contender.key, name: contender.name, port, child, pids: processTree(child), ...(logPipe && { loggedBytes: logPipe.bytes }) });
      } catch (error) {
        if (!contender.requires) throw error;
        leftOut.push({ name: contender.name, reason: error.message });
      } finally {
        // The child has its copy (or never started): it is the only writer, so its exit ends the pipe.
        logPipe?.closeWriteEnd();
      }
    }
  } catch (error) {
    await stopAll();
    throw error;
  }
  for (const { name, reason } of leftOut) console.error(`  left out ${name}: ${reason}`);
  return { targets, leftOut, stop: stopAll };
}

/** The markdown line under a table that names the peers left out and why (empty when none). */
export function leftOutNote(leftOut) {
  return leftOut.length ? `\n\nLeft out: ${leftOut.map(({ name, reason }) => `${name}: ${reason}`).join("; ")}.` : "";
}
