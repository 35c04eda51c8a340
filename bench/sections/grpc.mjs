// Section 8: gRPC unary calls (grpc-go, 10 in flight on one channel) to a Go gRPC server, directly and through each proxy, rotated: calls/s, p50/p99 and CPU per call of the proxy.
import { childPids, cpuMicrosOf, stop } from "../lib/processes.mjs";
import { perRound, ratioList, spread, table } from "../lib/stats.mjs";
import { buildGrpcBench, missingGrpc, runGrpcClient, startGrpcServer } from "../targets/grpc-bench.mjs";
import { startH2Haproxy, startH2ReadinessProxy } from "../targets/h2-peers.mjs";
import { missingCommand } from "../targets/peers.mjs";

export const GRPC_CONCURRENCY = 10;
const PORTS = { direct: 19160, haproxy: 19161, ours: 19162, baseline: 19163 };
const DIRECT = "direct (Go gRPC server)";
const HAPROXY = "HAProxy (nbthread 1, proto h2 on bind and server)";
const OURS = "readiness-proxy (binary, default --upstream-protocol)";
const BASELINE = "readiness-proxy (--baseline binary)";
const JIT_WARMED = new Set(["ours", "baseline"]);

export async function grpc({ rounds, seconds, binary, baseline, root, here }) {
  const missing = missingGrpc();
  if (missing) return { markdown: `Not measured: ${missing}.` };
  const program = buildGrpcBench({ root, here });
  const server = await startGrpcServer(program, PORTS.direct);
  const targets = [{ key: "direct", name: DIRECT, port: PORTS.direct, child: server, pids: () => [server.pid] }];
  const unsupported = [];
  const leftOut = [];
  const upstreamUrl = `http://127.0.0.1:${PORTS.direct}`;
  // The binary with its defaults: `auto` carries a gRPC call as h2c end to end; no flag, so a binary older than the flag is measured too (and found unable).
  const contenders = [
    { key: "haproxy", name: HAPROXY, requires: ["haproxy", "haproxy"], start: startH2Haproxy },
    { key: "ours", name: OURS, ours: true, start: (options) => startH2ReadinessProxy({ ...options, binary }) },
    ...(baseline ? [{ key: "baseline", name: BASELINE, ours: true, start: (options) => startH2ReadinessProxy({ ...options, binary: baseline }) }] : []),
  ];
  try {
    for (const contender of contenders) {
      const port = PORTS[contender.key];
      const absent = contender.requires && missingCommand(...contender.requires);
      if (absent) {
        leftOut.push(`${contender.name}: ${absent}`);
        continue;
      }
      let child;
      try {
        child = await contender.start({ port, upstreamPort: PORTS.direct, upstreamUrl });
      } catch (error) {
        (contender.ours ? unsupported : leftOut).push(`${contender.name}: ${error.message}`);
        continue;
      }
      // One call first: a binary that cannot carry gRPC is reported, not timed.
      const probe = await runGrpcClient(program, port, { concurrency: 1, seconds: 3, calls: 1 });
      if (probe.errors > 0 || probe.calls !== 1) {
        await stop(child);
        (contender.ours ? unsupported : leftOut).push(`${contender.name}: one unary call failed: ${probe.first_error ?? "no answer"}`);
        continue;
      }
      targets.push({ key: contender.key, name: contender.name, port, child, pids: () => [child.pid, ...childPids(child.pid)] });
    }
    for (const line of [...unsupported, ...leftOut]) console.error(`  not run: ${line}`);
    for (const target of targets) await runGrpcClient(program, target.port, { concurrency: GRPC_CONCURRENCY, seconds: JIT_WARMED.has(target.key) ? 2 : 1 });
    const results = new Map(targets.map((target) => [target.name, []]));
    for (let round = 0; round < rounds; round++) {
      for (const target of targets) {
        const before = cpuMicrosOf(target.pids());
        const run = await runGrpcClient(program, target.port, { concurrency: GRPC_CONCURRENCY, seconds });
        const cpuPerCall = (cpuMicrosOf(target.pids()) - before) / run.calls;
        const result = { callsPerSecond: run.calls / run.seconds, p50: run.p50_us, p99: run.p99_us, errors: run.errors, cpuPerCall };
        results.get(target.name).push(result);
        console.error(`  round ${round + 1} ${target.name}: ${result.callsPerSecond.toFixed(0)} calls/s, p99 ${run.p99_us.toFixed(0)} µs, ${cpuPerCall.toFixed(1)} µs/call, errors ${run.errors}`);
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
      spread(runs.map((run) => run.callsPerSecond)),
      spread(runs.map((run) => run.p50)),
      spread(runs.map((run) => run.p99)),
      spread(runs.map((run) => run.cpuPerCall), 1),
      String(runs.reduce((sum, run) => sum + run.errors, 0)),
    ];
  });
  for (const line of unsupported) rows.push([line.slice(0, line.indexOf(": ")), "unsupported by this binary", "-", "-", "-", "-"]);
  const lines = [];
  const direct = results.get(DIRECT);
  for (const name of [OURS, HAPROXY, BASELINE]) {
    const runs = results.get(name);
    if (!runs) continue;
    lines.push(`${name} / direct, per round: calls/s ${ratioList(perRound(runs, direct, "callsPerSecond"))}; p99 ${ratioList(perRound(runs, direct, "p99"))}.`);
  }
  if (results.has(OURS) && results.has(HAPROXY)) lines.push(`readiness-proxy / HAProxy, CPU per call per round: ${ratioList(perRound(results.get(OURS), results.get(HAPROXY), "cpuPerCall"))}.`);
  if (unsupported.length) lines.push(`Unsupported by this binary (one unary call tried first): ${unsupported.join("; ")}.`);
  if (leftOut.length) lines.push(`Left out: ${leftOut.join("; ")}.`);
  return [
    table(["target", "calls/s", "p50 µs", "p99 µs", "CPU µs/call (of the serving process; direct: the server's)", "errors"], rows),
    "",
    "The client (grpc-go, GOMAXPROCS=1) and the server share the cores with the proxy; the client's own time is in every row.",
    ...lines,
  ].join("\n");
}
