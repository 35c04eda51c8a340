// Section 7: h2c in and h2c out, h2load -c10 -m10 on a 100-byte file from an h2c nginx, directly and through each proxy, rotated: CPU of the proxy's process per request.
import { probeH2c } from "../lib/h2-probe.mjs";
import { runH2load } from "../lib/h2load.mjs";
import { childPids, cpuMicrosOf, rssAnonMbOf, stop } from "../lib/processes.mjs";
import { median, perRound, ratioList, spread, table } from "../lib/stats.mjs";
import { startCodecH2Floor, startH2Haproxy, startH2ReadinessProxy, startNodeH2Floor, startNodeH2Proxy } from "../targets/h2-peers.mjs";
import { startH2cUpstreamNginx } from "../targets/nginx.mjs";
import { missingCommand } from "../targets/peers.mjs";

export const H2_CLIENTS = 10;
export const H2_STREAMS = 10;
// Away from 19000-19065, which sections 1-6 (and other worktrees' runs of them) take.
const PORTS = { direct: 19150, haproxy: 19151, node: 19152, oursH2c: 19153, oursAuto: 19154, baselineH2c: 19155, floor: 19156, codec: 19157 };
export const H2_OURS = "readiness-proxy (binary, --upstream-protocol h2c)";
const H2_OURS_AUTO = "readiness-proxy (binary, --upstream-protocol auto)";
const H2_BASELINE = "readiness-proxy (--baseline binary, --upstream-protocol h2c)";
const HAPROXY = "HAProxy (nbthread 1, proto h2 on bind and server)";
const NODE = "node:http2 proxy, pipe() both ways (bench/targets/node-h2-proxy.mjs)";
const FLOOR = "node:http2 proxy, core API, plain callbacks (bench/targets/node-h2-floor.mjs)";
const CODEC = "our codec alone as a proxy (bench/targets/codec-h2-floor.ts)";
const DIRECT = "direct (nginx h2c upstream)";
const JIT_WARMED = new Set(["node", "floor", "codec", "oursH2c", "oursAuto", "baselineH2c"]);

/** Contenders in rotation order; `ours` ones are probed with one h2c request and reported as unsupported if they cannot carry it. */
function contenders({ binary, baseline, runtime, here }) {
  const list = [
    { key: "haproxy", name: HAPROXY, requires: ["haproxy", "haproxy"], start: startH2Haproxy },
    { key: "node", name: NODE, start: (options) => startNodeH2Proxy({ ...options, runtime, here }) },
    // How cheap a proxy on node:http2 can be: the floor under readiness-proxy's h2 rows.
    { key: "floor", name: FLOOR, start: (options) => startNodeH2Floor({ ...options, runtime, here }) },
    // The same without node:http2: src/h2-codec on both sides (issue 38), before the product rides it.
    { key: "codec", name: CODEC, start: (options) => startCodecH2Floor({ ...options, runtime, here }) },
    { key: "oursH2c", name: H2_OURS, ours: true, start: (options) => startH2ReadinessProxy({ ...options, binary, protocol: "h2c" }) },
    { key: "oursAuto", name: H2_OURS_AUTO, ours: true, start: (options) => startH2ReadinessProxy({ ...options, binary, protocol: "auto" }) },
  ];
  if (baseline) list.push({ key: "baselineH2c", name: H2_BASELINE, ours: true, start: (options) => startH2ReadinessProxy({ ...options, binary: baseline, protocol: "h2c" }) });
  return list;
}

export async function h2c(context) {
  const { rounds, seconds } = context;
  const missing = missingCommand("h2load", "nghttp2-client");
  if (missing) return { markdown: `Not measured: ${missing}.` };
  const upstream = await startH2cUpstreamNginx(PORTS.direct);
  const targets = [{ key: "direct", name: DIRECT, port: PORTS.direct, child: upstream.child, pids: upstream.pids }];
  const unsupported = [];
  const leftOut = [];
  try {
    for (const contender of contenders(context)) {
      const port = PORTS[contender.key];
      const absent = contender.requires && missingCommand(...contender.requires);
      if (absent) {
        leftOut.push(`${contender.name}: ${absent}`);
        continue;
      }
      let child;
      try {
        child = await contender.start({ port, upstreamPort: PORTS.direct, upstreamUrl: `http://127.0.0.1:${PORTS.direct}` });
      } catch (error) {
        if (!contender.ours && !contender.requires) throw error;
        (contender.ours ? unsupported : leftOut).push(`${contender.name}: ${error.message}`);
        continue;
      }
      const reason = await probeH2c(port);
      if (reason) {
        await stop(child);
        if (!contender.ours) throw new Error(`${contender.name}: ${reason}`);
        unsupported.push(`${contender.name}: ${reason}`);
        continue;
      }
      targets.push({ key: contender.key, name: contender.name, port, child, pids: () => [child.pid, ...childPids(child.pid)] });
    }
    for (const line of [...unsupported, ...leftOut]) console.error(`  not run: ${line}`);
    for (const target of targets) await runH2load(`http://127.0.0.1:${target.port}/file`, { clients: H2_CLIENTS, streams: H2_STREAMS, seconds: JIT_WARMED.has(target.key) ? 2 : 1 });
    const results = new Map(targets.map((target) => [target.name, []]));
    for (let round = 0; round < rounds; round++) {
      for (const target of targets) {
        const before = cpuMicrosOf(target.pids());
        const run = await runH2load(`http://127.0.0.1:${target.port}/file`, { clients: H2_CLIENTS, streams: H2_STREAMS, seconds });
        const cpuPerRequest = (cpuMicrosOf(target.pids()) - before) / run.requests;
        const rssMb = rssAnonMbOf(target.pids());
        results.get(target.name).push({ ...run, cpuPerRequest, rssMb });
        console.error(`  round ${round + 1} ${target.name}: ${run.rps.toFixed(0)} rps, ${cpuPerRequest.toFixed(1)} µs/req, errors ${run.errors}`);
      }
    }
    return { markdown: render(targets, results, unsupported, leftOut), results };
  } finally {
    await Promise.all(targets.map((target) => stop(target.child)));
  }
}

function render(targets, results, unsupported, leftOut) {
  const rows = targets.map((target) => {
    const runs = results.get(target.name);
    return [
      target.name,
      spread(runs.map((run) => run.rps)),
      median(runs.map((run) => run.meanMs)).toFixed(2),
      spread(runs.map((run) => run.cpuPerRequest), 1),
      spread(runs.map((run) => run.rssMb), 1),
      String(runs.reduce((sum, run) => sum + run.errors, 0)),
    ];
  });
  for (const line of unsupported) rows.push([line.slice(0, line.indexOf(": ")), "unsupported by this binary", "-", "-", "-", "-"]);
  const lines = [];
  const haproxy = results.get(HAPROXY);
  const against = (name, label, target) => {
    const runs = results.get(name);
    if (runs && haproxy) lines.push(`${label} / HAProxy, CPU per request per round: ${ratioList(perRound(runs, haproxy, "cpuPerRequest"))}${target}; requests/s ${ratioList(perRound(runs, haproxy, "rps"))}.`);
  };
  against(H2_OURS, "readiness-proxy (h2c)", " (issue 38: ≤ 2.00x, stretch ≤ 1.50x)");
  against(H2_OURS_AUTO, "readiness-proxy (auto)", "");
  against(NODE, "node:http2 pipe() proxy", "");
  against(FLOOR, "node:http2 core-API proxy (the floor)", "");
  against(CODEC, "our codec alone as a proxy", "");
  if (results.has(H2_OURS) && results.has(FLOOR)) lines.push(`readiness-proxy (h2c) / the node:http2 floor, CPU per request per round: ${ratioList(perRound(results.get(H2_OURS), results.get(FLOOR), "cpuPerRequest"))}.`);
  if (results.has(H2_BASELINE) && results.has(H2_OURS)) lines.push(`readiness-proxy (h2c) / the --baseline binary, CPU per request per round: ${ratioList(perRound(results.get(H2_OURS), results.get(H2_BASELINE), "cpuPerRequest"))}.`);
  if (unsupported.length) lines.push(`Unsupported by this binary (one h2c GET tried first): ${unsupported.join("; ")}.`);
  if (leftOut.length) lines.push(`Left out: ${leftOut.join("; ")}.`);
  return [
    table(["target", "requests/s", "mean ms (h2load)", "CPU µs/request (of the serving process)", "RssAnon after the run, MB", "errors"], rows),
    "",
    ...lines,
  ].join("\n");
}
