// Section 1: the same 100-byte file fetched directly and through each proxy, rotated, with proxy CPU per request.
import { cpuMicrosOf, rssAnonMb, stop } from "../lib/processes.mjs";
import { median, spread, table } from "../lib/stats.mjs";
import { runWrk } from "../lib/wrk.mjs";
import { startProxyNginx, startUpstreamNginx } from "../targets/nginx.mjs";
import { startNodeProxies } from "../targets/node-proxies.mjs";

const PORTS = { upstream: 19001, nginx: 19002, httpProxy: 19003, replyFrom: 19004, readinessProxy: 19005, readinessProxyMetrics: 19006, metricsListener: 19007 };
const OURS = "readiness-proxy (binary)";
const OURS_WITH_METRICS = "readiness-proxy (binary, --metrics-listen)";

export async function proxyOverhead({ rounds, seconds, runtime, binary, here }) {
  const upstreamUrl = `http://127.0.0.1:${PORTS.upstream}`;
  const upstream = await startUpstreamNginx(PORTS.upstream);
  const nginx = await startProxyNginx(PORTS.nginx, PORTS.upstream);
  const { httpProxy, replyFrom, readinessProxy, withMetrics } = await startNodeProxies({ runtime, binary, here, upstreamUrl, ports: PORTS });
  const targets = [
    { name: "direct (nginx upstream)", port: PORTS.upstream, pids: upstream.pids },
    { name: "nginx proxy (1 worker, keep-alive)", port: PORTS.nginx, pids: nginx.pids },
    { name: "node-http-proxy (keep-alive agent)", port: PORTS.httpProxy, pids: () => [httpProxy.pid] },
    { name: "fastify + @fastify/reply-from", port: PORTS.replyFrom, pids: () => [replyFrom.pid] },
    { name: OURS, port: PORTS.readinessProxy, pids: () => [readinessProxy.pid] },
    { name: OURS_WITH_METRICS, port: PORTS.readinessProxyMetrics, pids: () => [withMetrics.pid] },
  ];
  try {
    for (const target of targets) await runWrk(`http://127.0.0.1:${target.port}/file`, { seconds: 2 }); // warm-up, JIT
    const results = new Map(targets.map((target) => [target.name, []]));
    for (let round = 0; round < rounds; round++) {
      for (const target of targets) {
        const before = cpuMicrosOf(target.pids());
        const run = await runWrk(`http://127.0.0.1:${target.port}/file`, { connections: 50, seconds });
        const cpuPerRequest = (cpuMicrosOf(target.pids()) - before) / run.requests;
        results.get(target.name).push({ ...run, cpuPerRequest });
        console.error(`  round ${round + 1} ${target.name}: ${run.rps.toFixed(0)} rps, ${cpuPerRequest.toFixed(1)} µs/req, errors ${run.errors}`);
      }
    }
    const rssAfterRunMb = rssAnonMb(readinessProxy.pid);
    return { markdown: render(targets, results), results, rssAfterRunMb };
  } finally {
    await Promise.all([upstream.child, nginx.child, httpProxy, replyFrom, readinessProxy, withMetrics].map(stop));
  }
}

function render(targets, results) {
  const rows = targets.map((target) => {
    const runs = results.get(target.name);
    return [
      target.name,
      spread(runs.map((run) => run.rps)),
      median(runs.map((run) => run.p50)).toFixed(2),
      median(runs.map((run) => run.p99)).toFixed(2),
      spread(runs.map((run) => run.cpuPerRequest), 1),
      String(runs.reduce((sum, run) => sum + run.errors, 0)),
    ];
  });
  const ours = results.get(OURS);
  const ourCpu = median(ours.map((run) => run.cpuPerRequest));
  const ourRps = median(ours.map((run) => run.rps));
  const metricsRuns = results.get(OURS_WITH_METRICS);
  // Per round, so each ratio compares two runs made next to each other.
  const metricsRatios = metricsRuns.map((run, round) => run.cpuPerRequest / ours[round].cpuPerRequest);
  const ratios = targets.filter((target) => target.name !== OURS && target.name !== OURS_WITH_METRICS && !target.name.startsWith("direct")).map((target) => {
    const runs = results.get(target.name);
    return [
      target.name,
      `${(ourCpu / median(runs.map((run) => run.cpuPerRequest))).toFixed(2)}x`,
      `${(ourRps / median(runs.map((run) => run.rps))).toFixed(2)}x`,
    ];
  });
  return [
    table(["target", "requests/s", "p50 ms", "p99 ms", "CPU µs/request (of the serving process)", "errors"], rows),
    "",
    "readiness-proxy relative to each peer (CPU: lower is better; throughput: higher is better):",
    "",
    table(["peer", "CPU per request", "throughput"], ratios),
    "",
    `Metrics cost: CPU per request with \`--metrics-listen\` / without, per round: ${metricsRatios.map((ratio) => `${ratio.toFixed(2)}x`).join(", ")}; median ${median(metricsRatios).toFixed(2)}x (target ≤ 1.10x).`,
  ].join("\n");
}
