// Section 2: an SSE stream of COUNT events GAP_MS apart, directly and through each proxy: time to first event, gaps.
import { request } from "node:http";
import { start, stop, waitForPort } from "../lib/processes.mjs";
import { median, spread, table } from "../lib/stats.mjs";
import { startProxyNginx } from "../targets/nginx.mjs";
import { startNodeProxies } from "../targets/node-proxies.mjs";

// startNodeProxies also starts the --metrics-listen variant (section 1 measures it; here it only idles).
const PORTS = { upstream: 19010, nginx: 19012, httpProxy: 19013, replyFrom: 19014, readinessProxy: 19015, readinessProxyMetrics: 19016, metricsListener: 19017 };
const EVENTS = 100;
const GAP_MS = 10;

/** Reads one stream: ms to the first event, and the gaps between events as they arrived. */
function readStream(port) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const arrivals = [];
    const req = request({ host: "127.0.0.1", port, path: "/stream", agent: false }, (res) => {
      let buffered = "";
      res.on("data", (chunk) => {
        buffered += chunk;
        let end;
        while ((end = buffered.indexOf("\n\n")) >= 0) {
          buffered = buffered.slice(end + 2);
          arrivals.push(performance.now());
        }
      });
      res.on("end", () => {
        const gaps = arrivals.slice(1).map((time, index) => time - arrivals[index]);
        resolve({ events: arrivals.length, firstMs: arrivals[0] - started, meanGap: gaps.reduce((a, b) => a + b, 0) / gaps.length, maxGap: Math.max(...gaps) });
      });
    });
    req.on("error", reject);
    req.end();
  });
}

export async function streaming({ rounds, runtime, binary, here }) {
  const upstreamUrl = `http://127.0.0.1:${PORTS.upstream}`;
  const upstream = start([runtime, `${here}/targets/sse-upstream.mjs`, String(PORTS.upstream), String(EVENTS), String(GAP_MS)]);
  await waitForPort(PORTS.upstream);
  const nginx = await startProxyNginx(PORTS.nginx, PORTS.upstream);
  const { httpProxy, replyFrom, readinessProxy, withMetrics } = await startNodeProxies({ runtime, binary, here, upstreamUrl, ports: PORTS });
  const targets = [
    ["direct", PORTS.upstream],
    ["nginx proxy (proxy_buffering off)", PORTS.nginx],
    ["node-http-proxy", PORTS.httpProxy],
    ["fastify + @fastify/reply-from", PORTS.replyFrom],
    ["readiness-proxy (binary)", PORTS.readinessProxy],
  ];
  try {
    const results = new Map(targets.map(([name]) => [name, []]));
    for (let round = 0; round < rounds; round++) {
      for (const [name, port] of targets) results.get(name).push(await readStream(port));
    }
    const direct = median(results.get("direct").map((run) => run.firstMs));
    const rows = targets.map(([name]) => {
      const runs = results.get(name);
      const first = median(runs.map((run) => run.firstMs));
      return [
        name,
        String(Math.min(...runs.map((run) => run.events))),
        spread(runs.map((run) => run.firstMs), 2),
        `${(first - direct).toFixed(2)}`,
        spread(runs.map((run) => run.meanGap), 2),
        spread(runs.map((run) => run.maxGap), 2),
      ];
    });
    return {
      markdown: table(["target", "events", "first event ms", "first event vs direct ms", `mean gap ms (sent every ${GAP_MS})`, "max gap ms"], rows),
    };
  } finally {
    await Promise.all([upstream, nginx.child, httpProxy, replyFrom, readinessProxy, withMetrics].map(stop));
  }
}
