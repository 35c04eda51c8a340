// Section 5b: a new replica's first seconds: CPU per request and p99 in each of the first ten 1-s slices after /readyz turns 200, against the same process's steady state; HTTP/1.1 and gRPC, closed loop and at a fixed rate; nginx beside as the no-warm-up reference.
import { fixedRate } from "../lib/fixed-rate-client.mjs";
import { quantile } from "../lib/latency-client.mjs";
import { cpuMicros, start, stop, waitForPort } from "../lib/processes.mjs";
import { median, table } from "../lib/stats.mjs";
import { runWrk } from "../lib/wrk.mjs";
import { buildGrpcBench, missingGrpc, runGrpcClient, startGrpcServer } from "../targets/grpc-bench.mjs";
import { startProxyNginx, startUpstreamNginx } from "../targets/nginx.mjs";

/** `http1`: wrk -c50; `fixed`: 2,000 GETs a second over 50 connections; `grpc`: grpc-go, 10 in flight; `grpc-fixed`: 2,000 calls a second, 10 in flight. */
export const WARM_UP_LOADS = ["http1", "fixed", "grpc", "grpc-fixed"];
export const FIXED_RATE = 2000;
const SLICES = 10;
const STEADY_AFTER_S = 13;
const STEADY_SLICES = 3;
// Fixed ports (the proxy listens before its app does), away from other runs by this process id.
const PROXY_PORT = 30_000 + (process.pid % 10_000) * 2;
const APP_PORT = PROXY_PORT + 1;

/**
 * Contenders: `{ name, kind: "proxy", argv }` (the binary, or the bundle under a runtime with
 * flags, without --listen etc.), `{ name, kind: "nginx" }`; a proxy's `stdout` (a descriptor) and
 * `onReady(run)` (called the moment /readyz said 200) serve tracing. Each run is a fresh process;
 * its app (upstream) starts `appStartMs` after it, the time a warm-up has. Resolves to
 * `{ markdown, results }`: results by `load|name`, each run `{ readyMs, first, steady }`.
 */
export async function warmUp({ contenders, loads = WARM_UP_LOADS, rounds = 2, appStartMs = 1500, root, here }) {
  const grpcProgram = loads.some((load) => load.startsWith("grpc")) && missingGrpc() === null ? buildGrpcBench({ root, here }) : undefined;
  const results = new Map();
  for (let round = 0; round < rounds; round++) {
    for (const load of loads) {
      if (load.startsWith("grpc") && !grpcProgram) continue;
      for (const contender of contenders) {
        if (load.startsWith("grpc") && contender.kind === "nginx") continue;
        const run = await freshRun(contender, load, { appStartMs, grpcProgram });
        const key = `${load}|${contender.name}`;
        results.set(key, [...(results.get(key) ?? []), run]);
        const ratios = run.first.map((s) => (s.cpu / run.steady.cpu).toFixed(2)).join(" ");
        const p99s = run.first.map((s) => s.p99.toFixed(2)).join(" ");
        console.error(`  round ${round + 1} ${load} ${contender.name}: ready ${run.readyMs.toFixed(0)} ms; CPU/steady by slice ${ratios}; p99 ms by slice ${p99s}; steady ${run.steady.cpu.toFixed(1)} µs, p99 ${run.steady.p99.toFixed(2)} ms`);
      }
    }
  }
  const rows = [...results].map(([key, runs]) => {
    const [load, name] = key.split("|");
    const firstSix = (run) => Math.max(...run.first.slice(0, 6).map((s) => s.p99));
    return [
      load,
      name,
      `${median(runs.map((run) => run.first[0].cpu / run.steady.cpu)).toFixed(2)}x`,
      `${median(runs.map((run) => mean(run.first.slice(0, 3).map((s) => s.cpu)) / run.steady.cpu)).toFixed(2)}x`,
      `${median(runs.map((run) => quantileOfSlices(run, 6) / run.steady.p99)).toFixed(2)}x`,
      median(runs.map((run) => quantileOfSlices(run, 6))).toFixed(2),
      median(runs.map(firstSix)).toFixed(2),
      median(runs.map((run) => run.steady.cpu)).toFixed(1),
      median(runs.map((run) => run.steady.p99)).toFixed(2),
      runs.map((run) => run.first.map((s) => s.p99.toFixed(1)).join(" ")).join(" / "),
    ];
  });
  const markdown = [
    table(["load", "target", "CPU 1st s / steady", "CPU 1st 3 s / steady", "p99 of the first 6 s / steady p99", "p99 of the first 6 s, ms", "worst 1-s p99 of the first 6 s, ms", "steady CPU µs/req", "steady p99 ms", "p99 ms by slice, each run"], rows),
    "",
    `Steady: the ${STEADY_AFTER_S + 1}th to ${STEADY_AFTER_S + STEADY_SLICES}th second after ready, the same process. Targets (issue 53): the first second ≤ 1.5x the steady CPU per request, the first three ≤ 1.25x; at a fixed ${FIXED_RATE.toLocaleString("en")} req/s the p99 of the first 6 s ≤ 2x the steady p99 and ≤ 2 ms. The app listens ${appStartMs} ms after the proxy starts (the warm-up's time); nginx has no warm-up. A closed loop's p99 follows its throughput; its CPU ratios are the figure.`,
  ].join("\n");
  return { markdown, results };
}

const mean = (values) => values.reduce((sum, value) => sum + value, 0) / values.length;

/** The p99 over the first `count` slices' requests where they were kept (the HTTP/1.1 fixed rate), else the median slice's p99 as a stand-in. */
function quantileOfSlices(run, count) {
  const kept = run.first.slice(0, count).map((s) => s.latencies);
  if (kept.every(Boolean)) return quantile(kept.flat(), 0.99) / 1000;
  return Math.max(...run.first.slice(0, count).map((s) => s.p99));
}

/** One fresh contender: started, its app up `appStartMs` later, ready; then the load's slices and the steady ones. */
async function freshRun(contender, load, { appStartMs, grpcProgram }) {
  const grpc = load.startsWith("grpc");
  const proxy =
    contender.kind === "proxy"
      ? // The sidecar form as deployed: the app's port a required listener, so /readyz fails while the app starts (the warm-up's time).
        start([...contender.argv, "--listen", `127.0.0.1:${PROXY_PORT}`, "--upstream", `http://127.0.0.1:${APP_PORT}`, "--readiness-required-listener", String(APP_PORT), "--log-level", "warn"], { stdout: contender.stdout ?? "ignore", ...(contender.env && { env: contender.env }) })
      : undefined;
  const startedAt = performance.now();
  await new Promise((resolve) => setTimeout(resolve, appStartMs));
  const app = grpc ? await startGrpcServer(grpcProgram, APP_PORT) : await startUpstreamNginx(APP_PORT);
  const nginx = contender.kind === "nginx" ? await startProxyNginx(PROXY_PORT, APP_PORT) : undefined;
  const pid = proxy?.pid ?? nginx.pids()[1];
  try {
    await waitForPort(PROXY_PORT);
    if (proxy) await untilReady();
    const readyMs = performance.now() - startedAt;
    contender.onReady?.({ load, readyMs });
    const first = await slicesOf(load, pid, SLICES, grpcProgram);
    await slicesOf(load, pid, STEADY_AFTER_S - SLICES, grpcProgram);
    const steady = await slicesOf(load, pid, STEADY_SLICES, grpcProgram);
    return { readyMs, first, steady: { cpu: median(steady.map((s) => s.cpu)), p99: median(steady.map((s) => s.p99)) } };
  } finally {
    if (proxy) await stop(proxy);
    if (nginx) await stop(nginx.child);
    await stop(app.child ?? app);
  }
}

async function untilReady() {
  for (let asked = 0; asked < 1000; asked++) {
    const status = await fetch(`http://127.0.0.1:${PROXY_PORT}/readyz`).then((reply) => reply.status, () => 0);
    if (status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error("never ready");
}

/** `count` 1-s slices of the load: CPU µs per request of `pid` and p99 ms, each slice (the fixed HTTP/1.1 rate keeps its latencies too). */
async function slicesOf(load, pid, count, grpcProgram) {
  if (load === "fixed") {
    const cpu = [cpuMicros(pid)];
    const { slices } = await fixedRate(PROXY_PORT, { rate: FIXED_RATE, seconds: count, connections: 50, onSecond: () => cpu.push(cpuMicros(pid)) });
    return slices.map((latencies, at) => ({ cpu: (cpu[at + 1] - cpu[at]) / FIXED_RATE, p99: quantile(latencies, 0.99) / 1000, latencies }));
  }
  if (load === "grpc-fixed") {
    // The Go client runs its own clock: the CPU is sampled each second from its start, close enough to its slices.
    const cpu = [cpuMicros(pid)];
    const sampler = setInterval(() => cpu.push(cpuMicros(pid)), 1000);
    const result = await runGrpcClient(grpcProgram, PROXY_PORT, { concurrency: 10, seconds: count, rate: FIXED_RATE }).finally(() => clearInterval(sampler));
    while (cpu.length <= count) cpu.push(cpuMicros(pid));
    return (result.slice_p99_us ?? []).map((p99, at) => ({ cpu: (cpu[at + 1] - cpu[at]) / FIXED_RATE, p99: p99 / 1000 }));
  }
  const out = [];
  for (let slice = 0; slice < count; slice++) {
    const before = cpuMicros(pid);
    if (load === "grpc") {
      const result = await runGrpcClient(grpcProgram, PROXY_PORT, { concurrency: 10, seconds: 1 });
      out.push({ cpu: (cpuMicros(pid) - before) / result.calls, p99: result.p99_us / 1000 });
    } else {
      const result = await runWrk(`http://127.0.0.1:${PROXY_PORT}/file`, { connections: 50, seconds: 1 });
      out.push({ cpu: (cpuMicros(pid) - before) / result.requests, p99: result.p99 });
    }
  }
  return out;
}

/** An app that listens at once (the upstream already up): exec to the first /readyz 200, polled every 2 ms, runs rotated. Resolves to ms by contender name. */
export async function execToReady(contenders, runs) {
  const app = await startUpstreamNginx(APP_PORT);
  const times = new Map();
  try {
    for (let run = 0; run < runs; run++) {
      for (const contender of contenders.filter((candidate) => candidate.kind === "proxy")) times.set(contender.name, [...(times.get(contender.name) ?? []), await execToReadyOnce(contender)]);
    }
  } finally {
    await stop(app.child);
  }
  return times;
}

async function execToReadyOnce(contender) {
  const startedAt = performance.now();
  const proxy = start([...contender.argv, "--listen", `127.0.0.1:${PROXY_PORT}`, "--upstream", `http://127.0.0.1:${APP_PORT}`, "--readiness-required-listener", String(APP_PORT), "--log-level", "warn"], { stdout: "ignore", ...(contender.env && { env: contender.env }) });
  try {
    for (let asked = 0; asked < 5000; asked++) {
      const status = await fetch(`http://127.0.0.1:${PROXY_PORT}/readyz`).then((reply) => reply.status, () => 0);
      if (status === 200) return performance.now() - startedAt;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    throw new Error("never ready");
  } finally {
    await stop(proxy);
  }
}
