// Section 3: 256 keep-alive callers on /readyz for SECONDS: requests/s next to a bare node:http server, and socket-table reads.
import { openSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cpuMicros, start, stop, waitForPort } from "../lib/processes.mjs";
import { median, spread, table } from "../lib/stats.mjs";
import { runWrk } from "../lib/wrk.mjs";

const PORTS = { readinessProxy: 19020, hello: 19021 };

/** Scans so far: the daemon logs one trace line per scan (see src/readiness/readiness-check.ts). */
function scansIn(logPath) {
  return readFileSync(logPath, "utf8").split("\n").filter((line) => line.includes('"msg":"socket tables scanned"')).length;
}

export async function readyzCrowd({ rounds, seconds, runtime, binary, here }) {
  const logPath = join(tmpdir(), `rp-bench-readyz-${process.pid}.log`);
  // The required port is the proxy's own listener: always there, so every answer is 200.
  const readinessProxy = start(
    [binary, "--listen", `127.0.0.1:${PORTS.readinessProxy}`, "--readiness-required-listener", String(PORTS.readinessProxy), "--readiness-cache-ttl", "1s", "--log-level", "trace"],
    { stdout: openSync(logPath, "w") },
  );
  const hello = start([runtime, `${here}/targets/hello-server.mjs`, String(PORTS.hello)]);
  await Promise.all([waitForPort(PORTS.readinessProxy), waitForPort(PORTS.hello)]);
  try {
    await runWrk(`http://127.0.0.1:${PORTS.readinessProxy}/readyz`, { seconds: 2, connections: 256 });
    await runWrk(`http://127.0.0.1:${PORTS.hello}/`, { seconds: 2, connections: 256 });
    const ours = [];
    const floor = [];
    for (let round = 0; round < rounds; round++) {
      const scansBefore = scansIn(logPath);
      const cpuBefore = cpuMicros(readinessProxy.pid);
      const run = await runWrk(`http://127.0.0.1:${PORTS.readinessProxy}/readyz`, { seconds, connections: 256 });
      ours.push({ ...run, scans: scansIn(logPath) - scansBefore, cpuPerRequest: (cpuMicros(readinessProxy.pid) - cpuBefore) / run.requests });
      const helloCpu = cpuMicros(hello.pid);
      const helloRun = await runWrk(`http://127.0.0.1:${PORTS.hello}/`, { seconds, connections: 256 });
      floor.push({ ...helloRun, cpuPerRequest: (cpuMicros(hello.pid) - helloCpu) / helloRun.requests });
      console.error(`  round ${round + 1}: /readyz ${run.rps.toFixed(0)} rps with ${ours.at(-1).scans} scans; hello ${helloRun.rps.toFixed(0)} rps`);
    }
    const bound = seconds / 1 + 1;
    const rows = [
      ["readiness-proxy /readyz (1 s TTL, one required port)", spread(ours.map((run) => run.rps)), spread(ours.map((run) => run.cpuPerRequest), 1), median(ours.map((run) => run.p99)).toFixed(2), `${Math.max(...ours.map((run) => run.scans))} (bound ${bound})`, String(ours.reduce((sum, run) => sum + run.errors, 0))],
      ["bare node:http hello world (same runtime)", spread(floor.map((run) => run.rps)), spread(floor.map((run) => run.cpuPerRequest), 1), median(floor.map((run) => run.p99)).toFixed(2), "-", String(floor.reduce((sum, run) => sum + run.errors, 0))],
    ];
    const ratio = median(ours.map((run) => run.rps)) / median(floor.map((run) => run.rps));
    return {
      markdown: `${table(["target", "requests/s", "CPU µs/request", "p99 ms", "table scans per run (max)", "errors"], rows)}\n\n/readyz throughput relative to the bare server: ${ratio.toFixed(2)}x. Each scan reads both tables once.`,
      maxScans: Math.max(...ours.map((run) => run.scans)),
      ratio,
    };
  } finally {
    await Promise.all([readinessProxy, hello].map(stop));
  }
}
