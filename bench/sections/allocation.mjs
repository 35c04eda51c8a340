// Section 9: bytes allocated on the V8 heap per proxied HTTP/1.1 request and GC pauses per 1,000 requests, from the bundle under the embedded runtime with a stats preload, over bounded wrk runs.
import { openLogPipe } from "../lib/log-pipe.mjs";
import { cpuMicros, stop } from "../lib/processes.mjs";
import { gcBetween, seaExecArgv, startInstrumentedBundle } from "../lib/runtime-stats.mjs";
import { median, perRound, ratioList, spread, table } from "../lib/stats.mjs";
import { runWrk } from "../lib/wrk.mjs";
import { startUpstreamNginx } from "../targets/nginx.mjs";

export const ALLOC_CONNECTIONS = 50;
const PORTS = { upstream: 19170, plain: 19171, accessLog: 19172 };
const PLAIN = "relay (bundle, as the binary runs it)";
const ACCESS_LOG = "relay with --access-log (info, to a FIFO)";

export async function allocation({ rounds, seconds, runtime, root, here }) {
  const upstream = await startUpstreamNginx(PORTS.upstream);
  const upstreamArgs = (port) => ["--listen", `127.0.0.1:${port}`, "--upstream", `http://127.0.0.1:${PORTS.upstream}`];
  const logPipe = openLogPipe();
  const started = [];
  try {
    started.push({ name: PLAIN, port: PORTS.plain, ...(await startInstrumentedBundle({ runtime, root, here, port: PORTS.plain, args: [...upstreamArgs(PORTS.plain), "--log-level", "warn"] })) });
    try {
      started.push({
        name: ACCESS_LOG,
        port: PORTS.accessLog,
        ...(await startInstrumentedBundle({ runtime, root, here, port: PORTS.accessLog, args: [...upstreamArgs(PORTS.accessLog), "--log-level", "info", "--access-log"], stdout: logPipe.fd })),
      });
    } finally {
      logPipe.closeWriteEnd();
    }
    for (const target of started) await runWrk(`http://127.0.0.1:${target.port}/file`, { connections: ALLOC_CONNECTIONS, seconds: 2 });
    const results = new Map(started.map((target) => [target.name, []]));
    for (let round = 0; round < rounds; round++) {
      for (const target of started) {
        const before = await target.read();
        const cpuBefore = cpuMicros(target.child.pid);
        const run = await runWrk(`http://127.0.0.1:${target.port}/file`, { connections: ALLOC_CONNECTIONS, seconds });
        const cpu = cpuMicros(target.child.pid) - cpuBefore;
        const after = await target.read();
        const gc = gcBetween(before, after);
        const perThousand = 1000 / run.requests;
        const result = {
          requests: run.requests,
          rps: run.rps,
          errors: run.errors,
          bytesPerRequest: (after.allocatedBytes - before.allocatedBytes) / run.requests,
          scavengesPerThousand: gc.scavenges * perThousand,
          markCompactsPerThousand: gc.markCompacts * perThousand,
          pauseMsPerThousand: gc.pauseMs * perThousand,
          // Wall time: a pause in which the VM took the core away counts in full, so the median too.
          medianPauseUs: after.gcEvents.length ? median(after.gcEvents.map(([, durationMs]) => durationMs * 1000)) : 0,
          cpuPerRequest: cpu / run.requests,
        };
        results.get(target.name).push(result);
        console.error(`  round ${round + 1} ${target.name}: ${result.bytesPerRequest.toFixed(0)} B/req, ${result.scavengesPerThousand.toFixed(2)} scavenges and ${result.pauseMsPerThousand.toFixed(2)} ms GC per 1,000 req, ${result.cpuPerRequest.toFixed(1)} µs/req`);
      }
    }
    return { markdown: render(results, root), results };
  } finally {
    await Promise.all([upstream.child, ...started.map((target) => target.child)].map(stop));
    logPipe.close();
  }
}

function render(results, root) {
  const rows = [...results].map(([name, runs]) => [
    name,
    spread(runs.map((run) => run.rps)),
    spread(runs.map((run) => run.bytesPerRequest)),
    spread(runs.map((run) => run.scavengesPerThousand), 2),
    spread(runs.map((run) => run.markCompactsPerThousand), 3),
    spread(runs.map((run) => run.pauseMsPerThousand), 2),
    spread(runs.map((run) => run.medianPauseUs)),
    spread(runs.map((run) => run.cpuPerRequest), 1),
    String(runs.reduce((sum, run) => sum + run.errors, 0)),
  ]);
  return [
    table(["target", "requests/s", "bytes allocated per request (V8 heap)", "scavenges per 1,000 req", "mark-compacts per 1,000 req", "GC pause ms per 1,000 req (wall)", "median GC pause µs", "CPU µs/request", "errors"], rows),
    "",
    `wrk -c${ALLOC_CONNECTIONS} on the 100-byte file, the bundle under the embedded runtime with \`${seaExecArgv(root).join(" ")}\` (the SEA's execArgv) and \`--require bench/lib/runtime-stats-preload.cjs\`. Allocation is V8's used heap grown between GCs (GCProfiler), so buffers outside the heap (socket reads) are not in it.`,
    `Access log's allocation over the plain relay's, per round: ${ratioList(perRound(results.get(ACCESS_LOG), results.get(PLAIN), "bytesPerRequest"))}.`,
  ].join("\n");
}
