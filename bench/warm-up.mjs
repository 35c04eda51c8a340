// A new replica's first seconds: CPU per request and p99 in each of the first ten 1-s slices after /readyz turns 200, against the same process's steady state; HTTP/1.1 (closed loop and a fixed rate) and gRPC; nginx beside as the no-warm-up reference.
// Usage: node bench/warm-up.mjs [--rounds 2] [--app-start-ms 1500] [--baseline BINARY] [--binary BINARY] [--loads http1,fixed,grpc,ready-at-once]
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { fixedRate } from "./lib/fixed-rate-client.mjs";
import { cpuMicros, start, stop, waitForPort } from "./lib/processes.mjs";
import { median } from "./lib/stats.mjs";
import { runWrk } from "./lib/wrk.mjs";
import { buildGrpcBench, missingGrpc, runGrpcClient, startGrpcServer } from "./targets/grpc-bench.mjs";
import { startProxyNginx, startUpstreamNginx } from "./targets/nginx.mjs";
import { option } from "./lib/options.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");
const rounds = Number(option("rounds", "2"));
const binary = option("binary", join(root, "dist/readiness-proxy"));
const baseline = option("baseline", undefined);
const loads = option("loads", "http1,fixed,grpc").split(",");
/** The app's start: the upstream listens this long after the proxy was started, the time a warm-up has. */
const APP_START_MS = Number(option("app-start-ms", "1500"));
const SLICES = 10;
const STEADY_AFTER_S = 10;
const STEADY_SLICES = 3;
// Fixed ports (the proxy listens before its app does), away from other runs by this process id.
const PROXY_PORT = 30_000 + (process.pid % 10_000) * 2;
const APP_PORT = PROXY_PORT + 1;

const contenders = [
  { name: "readiness-proxy (this build)", kind: "proxy", binary },
  ...(baseline ? [{ name: "readiness-proxy (--baseline)", kind: "proxy", binary: baseline }] : []),
  { name: "nginx proxy", kind: "nginx" },
];
for (const contender of contenders) if (contender.binary && !existsSync(contender.binary)) throw new Error(`no binary at ${contender.binary}`);
const grpcProgram = loads.includes("grpc") && missingGrpc() === null ? buildGrpcBench({ root, here }) : undefined;

/** One fresh contender: started, its app (upstream) up APP_START_MS later, ready; then the load's slices and the steady ones. */
async function freshRun(contender, load) {
  const grpc = load === "grpc";
  const proxy =
    contender.kind === "proxy"
      ? // The sidecar form as deployed: the app's port a required listener, so /readyz fails while the app starts (the warm-up's time).
        start([contender.binary, "--listen", `127.0.0.1:${PROXY_PORT}`, "--upstream", `http://127.0.0.1:${APP_PORT}`, "--readiness-required-listener", String(APP_PORT), "--log-level", "warn"], { stdout: "ignore" })
      : undefined;
  const startedAt = performance.now();
  await new Promise((resolve) => setTimeout(resolve, APP_START_MS));
  const app = grpc ? await startGrpcServer(grpcProgram, APP_PORT) : await startUpstreamNginx(APP_PORT);
  const nginx = contender.kind === "nginx" ? await startProxyNginx(PROXY_PORT, APP_PORT) : undefined;
  const pid = proxy?.pid ?? nginx.pids()[1];
  try {
    await waitForPort(PROXY_PORT);
    if (proxy) await untilReady();
    const readyMs = performance.now() - startedAt;
    const first = await slicesOf(load, pid, SLICES);
    await slicesOf(load, pid, STEADY_AFTER_S - SLICES > 0 ? STEADY_AFTER_S - SLICES : 3);
    const steady = await slicesOf(load, pid, STEADY_SLICES);
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

/** `count` 1-s slices of the load: CPU µs per request of `pid`, p99 ms. */
async function slicesOf(load, pid, count) {
  if (load === "fixed") {
    const before = cpuMicros(pid);
    const { slices } = await fixedRate(PROXY_PORT, { rate: 2000, seconds: count, connections: 50 });
    const cpu = (cpuMicros(pid) - before) / (2000 * count);
    // The client times by due time; the CPU over the whole run (per-slice CPU would need a sampler beside it).
    return slices.map((latencies) => ({ cpu, p99: quantile(latencies, 0.99) / 1000 }));
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

function quantile(values, q) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** An app that listens at once (the upstream already up): exec to the first /readyz 200, polled every 2 ms, rounds rotated. */
async function execToReady(contender) {
  const startedAt = performance.now();
  const proxy = start([contender.binary, "--listen", `127.0.0.1:${PROXY_PORT}`, "--upstream", `http://127.0.0.1:${APP_PORT}`, "--readiness-required-listener", String(APP_PORT), "--log-level", "warn"], { stdout: "ignore" });
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

if (loads.includes("ready-at-once")) {
  const app = await startUpstreamNginx(APP_PORT);
  const times = new Map();
  try {
    for (let round = 0; round < rounds * 5; round++) {
      for (const contender of contenders.filter((candidate) => candidate.kind === "proxy")) times.set(contender.name, [...(times.get(contender.name) ?? []), await execToReady(contender)]);
    }
  } finally {
    await stop(app.child);
  }
  for (const [name, values] of times) console.log(`exec to the first /readyz 200, an app already listening: ${name}: median ${median(values).toFixed(0)} ms (${Math.min(...values).toFixed(0)}-${Math.max(...values).toFixed(0)}), ${values.length} runs`);
}

const results = new Map();
for (let round = 0; round < rounds; round++) {
  for (const load of loads) {
    if (load === "ready-at-once" || (load === "grpc" && !grpcProgram)) continue;
    for (const contender of contenders) {
      if (load === "grpc" && contender.kind === "nginx") continue;
      const run = await freshRun(contender, load);
      const key = `${load}|${contender.name}`;
      results.set(key, [...(results.get(key) ?? []), run]);
      const ratios = run.first.map((s) => (s.cpu / run.steady.cpu).toFixed(2)).join(" ");
      const p99s = run.first.map((s) => s.p99.toFixed(2)).join(" ");
      console.error(`round ${round + 1} ${load} ${contender.name}: ready ${run.readyMs.toFixed(0)} ms; CPU/steady by slice ${ratios}; p99 ms by slice ${p99s}; steady ${run.steady.cpu.toFixed(1)} µs, p99 ${run.steady.p99.toFixed(2)} ms`);
    }
  }
}

console.log("| load | target | CPU 1st s / steady | CPU 1st 3 s / steady | worst 1-s p99 of the first 6 s / steady p99 | worst 1-s p99 of the first 6 s, ms | steady CPU µs/req | steady p99 ms |");
console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
for (const [key, runs] of results) {
  const [load, name] = key.split("|");
  const first = median(runs.map((run) => run.first[0].cpu / run.steady.cpu));
  const three = median(runs.map((run) => median(run.first.slice(0, 3).map((s) => s.cpu)) / run.steady.cpu));
  const p99six = median(runs.map((run) => Math.max(...run.first.slice(0, 6).map((s) => s.p99))));
  const p99ratio = median(runs.map((run) => Math.max(...run.first.slice(0, 6).map((s) => s.p99)) / run.steady.p99));
  const steadyCpu = median(runs.map((run) => run.steady.cpu));
  const steadyP99 = median(runs.map((run) => run.steady.p99));
  console.log(`| ${load} | ${name} | ${first.toFixed(2)}x | ${three.toFixed(2)}x | ${p99ratio.toFixed(2)}x | ${p99six.toFixed(2)} | ${steadyCpu.toFixed(1)} | ${steadyP99.toFixed(2)} |`);
}
