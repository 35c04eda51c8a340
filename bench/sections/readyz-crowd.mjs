// Section 3: 256 keep-alive callers on /readyz for SECONDS, with and without the upstream check: requests/s and latency next to a bare node:http server, table reads and probes counted.
import { openSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cpuMicros, start, stop, waitForPort } from "../lib/processes.mjs";
import { median, spread, table } from "../lib/stats.mjs";
import { runWrk } from "../lib/wrk.mjs";

const PORTS = { readinessProxy: 19020, hello: 19021, withUpstreamCheck: 19022, app: 19023 };

/** Scans so far: the daemon logs one trace line per scan (see src/readiness/readiness-check.ts). */
function scansIn(logPath) {
  return readFileSync(logPath, "utf8").split("\n").filter((line) => line.includes('"msg":"socket tables scanned"')).length;
}

export async function readyzCrowd({ rounds, seconds, runtime, binary, here }) {
  const logPath = join(tmpdir(), `rp-bench-readyz-${process.pid}.log`);
  // The required port is the bare server's, listening for the whole section, so every answer is 200.
  // (The proxy's own port is refused as a required listener: it would pass whatever it was meant to watch.)
  const readinessProxy = start(
    [binary, "--listen", `127.0.0.1:${PORTS.readinessProxy}`, "--readiness-required-listener", String(PORTS.hello), "--readiness-cache-ttl", "1s", "--log-level", "trace"],
    { stdout: openSync(logPath, "w") },
  );
  const hello = start([runtime, `${here}/targets/hello-server.mjs`, String(PORTS.hello)]);
  const app = start([runtime, `${here}/targets/counting-upstream.mjs`, String(PORTS.app)]);
  const upstreamLogPath = join(tmpdir(), `rp-bench-readyz-upstream-${process.pid}.log`);
  const withUpstream = start(
    [
      binary, "--listen", `127.0.0.1:${PORTS.withUpstreamCheck}`, "--upstream", `http://127.0.0.1:${PORTS.app}`,
      "--readiness-required-listener", String(PORTS.app), "--readiness-upstream-path", "/ready",
      "--readiness-cache-ttl", "1s", "--log-level", "trace",
    ],
    { stdout: openSync(upstreamLogPath, "w") },
  );
  await Promise.all([PORTS.readinessProxy, PORTS.hello, PORTS.app, PORTS.withUpstreamCheck].map((port) => waitForPort(port)));
  const probes = async () => Number(await (await fetch(`http://127.0.0.1:${PORTS.app}/count`)).text());
  try {
    await runWrk(`http://127.0.0.1:${PORTS.readinessProxy}/readyz`, { seconds: 2, connections: 256 });
    await runWrk(`http://127.0.0.1:${PORTS.hello}/`, { seconds: 2, connections: 256 });
    await runWrk(`http://127.0.0.1:${PORTS.withUpstreamCheck}/readyz`, { seconds: 2, connections: 256 });
    const ours = [];
    const checked = [];
    const floor = [];
    for (let round = 0; round < rounds; round++) {
      const scansBefore = scansIn(logPath);
      const cpuBefore = cpuMicros(readinessProxy.pid);
      const run = await runWrk(`http://127.0.0.1:${PORTS.readinessProxy}/readyz`, { seconds, connections: 256 });
      ours.push({ ...run, scans: scansIn(logPath) - scansBefore, cpuPerRequest: (cpuMicros(readinessProxy.pid) - cpuBefore) / run.requests });
      const scansBeforeChecked = scansIn(upstreamLogPath);
      const probesBefore = await probes();
      const checkedCpu = cpuMicros(withUpstream.pid);
      const checkedRun = await runWrk(`http://127.0.0.1:${PORTS.withUpstreamCheck}/readyz`, { seconds, connections: 256 });
      checked.push({
        ...checkedRun,
        scans: scansIn(upstreamLogPath) - scansBeforeChecked,
        probes: (await probes()) - probesBefore,
        cpuPerRequest: (cpuMicros(withUpstream.pid) - checkedCpu) / checkedRun.requests,
      });
      const helloCpu = cpuMicros(hello.pid);
      const helloRun = await runWrk(`http://127.0.0.1:${PORTS.hello}/`, { seconds, connections: 256 });
      floor.push({ ...helloRun, cpuPerRequest: (cpuMicros(hello.pid) - helloCpu) / helloRun.requests });
      console.error(`  round ${round + 1}: /readyz ${run.rps.toFixed(0)} rps with ${ours.at(-1).scans} scans; with the upstream check ${checkedRun.rps.toFixed(0)} rps, ${checked.at(-1).scans} scans, ${checked.at(-1).probes} probes; hello ${helloRun.rps.toFixed(0)} rps`);
    }
    const bound = seconds / 1 + 1;
    const rows = [
      ["readiness-proxy /readyz (1 s TTL, one required port)", spread(ours.map((run) => run.rps)), spread(ours.map((run) => run.cpuPerRequest), 1), median(ours.map((run) => run.p50)).toFixed(2), median(ours.map((run) => run.p99)).toFixed(2), `${Math.max(...ours.map((run) => run.scans))} (bound ${bound})`, "-", String(ours.reduce((sum, run) => sum + run.errors, 0))],
      ["the same, plus --readiness-upstream-path", spread(checked.map((run) => run.rps)), spread(checked.map((run) => run.cpuPerRequest), 1), median(checked.map((run) => run.p50)).toFixed(2), median(checked.map((run) => run.p99)).toFixed(2), `${Math.max(...checked.map((run) => run.scans))} (bound ${bound})`, `${Math.max(...checked.map((run) => run.probes))} (bound ${bound})`, String(checked.reduce((sum, run) => sum + run.errors, 0))],
      ["bare node:http hello world (same runtime)", spread(floor.map((run) => run.rps)), spread(floor.map((run) => run.cpuPerRequest), 1), median(floor.map((run) => run.p50)).toFixed(2), median(floor.map((run) => run.p99)).toFixed(2), "-", "-", String(floor.reduce((sum, run) => sum + run.errors, 0))],
    ];
    const ratio = median(ours.map((run) => run.rps)) / median(floor.map((run) => run.rps));
    return {
      markdown: `${table(["target", "requests/s", "CPU µs/request", "p50 ms", "p99 ms", "table scans per run (max)", "upstream probes per run (max)", "errors"], rows)}\n\n/readyz throughput relative to the bare server: ${ratio.toFixed(2)}x. Each scan reads both tables once.`,
      maxScans: Math.max(...ours.map((run) => run.scans)),
      ratio,
    };
  } finally {
    await Promise.all([readinessProxy, hello, app, withUpstream].map(stop));
  }
}
