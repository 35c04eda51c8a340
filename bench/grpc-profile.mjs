// Issue 25: CPU per gRPC call of a readiness-proxy bundle under section 8's load (grpc-go, 10 in flight on one channel), at a chosen semi-space size, optionally with a --cpu-prof summary or (--heap) bytes allocated per call by function.
// Usage: node bench/grpc-profile.mjs [--bundle dist/readiness-proxy.cjs] [--semi-space 2,16] [--seconds 5] [--profile | --heap]
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { cpuMicros, rssAnonMb, startListening, stop } from "./lib/processes.mjs";
import { seaExecArgv } from "./lib/runtime-stats.mjs";
import { buildGrpcBench, runGrpcClient, startGrpcServer } from "./targets/grpc-bench.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");
const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : fallback);
const bundle = option("bundle", join(root, "dist/readiness-proxy.cjs"));
const sizes = option("semi-space", "2,16").split(",");
const seconds = Number(option("seconds", "5"));
const profile = args.includes("--profile");
const heap = args.includes("--heap");
const runtime = join(root, `node_modules/node-linux-${process.arch}/bin/node`);
const program = buildGrpcBench({ root, here });
const server = await startGrpcServer(program, 19201);
try {
  // Alternated twice, so a neighbour's burst does not land on one size only.
  for (const size of [...sizes, ...sizes]) {
    const profiles = mkdtempSync(join(tmpdir(), "rp-bench-grpc-prof-"));
    const heapProfile = join(profiles, "grpc.heapprofile");
    const flags = [...seaExecArgv(root).filter((flag) => !flag.startsWith("--max-semi-space-size=")), `--max-semi-space-size=${size}`, ...(profile ? ["--cpu-prof", `--cpu-prof-dir=${profiles}`] : []), ...(heap ? ["--require", join(here, "lib/heap-sampling-preload.cjs")] : [])];
    const argv = [runtime, ...flags, bundle, "--listen", "127.0.0.1:19202", "--upstream", "http://127.0.0.1:19201", "--log-level", "warn", "--shutdown-delay", "0s"];
    const proxy = await startListening(argv, 19202, { env: { ...process.env, BENCH_HEAP_PROFILE: heapProfile } });
    await runGrpcClient(program, 19202, { seconds: 2 }); // the JIT's warm-up, outside the heap sample
    if (heap) proxy.kill("SIGUSR2");
    const before = cpuMicros(proxy.pid);
    const run = await runGrpcClient(program, 19202, { seconds });
    if (heap) proxy.kill("SIGUSR2");
    console.log(`semi-space ${size} MB: ${run.calls} calls, ${run.errors} errors, ${((cpuMicros(proxy.pid) - before) / run.calls).toFixed(1)} µs CPU per call${heap ? " (under the heap sampler)" : ""}, RssAnon after ${rssAnonMb(proxy.pid).toFixed(1)} MB`);
    if (heap) await new Promise((resolve) => setTimeout(resolve, 1000)); // the profile is written from the daemon's loop
    await stop(proxy); // SIGTERM and no shutdown delay: a normal exit, so the profile is written
    if (heap) console.log(execFileSync(process.execPath, [join(here, "lib/heap-profile-summary.mjs"), heapProfile, String(run.calls)], { encoding: "utf8" }));
    const [written] = readdirSync(profiles).filter((name) => name.endsWith(".cpuprofile"));
    if (written) console.log(execFileSync(process.execPath, [join(here, "lib/profile-summary.mjs"), join(profiles, written), "12"], { encoding: "utf8" }));
  }
} finally {
  await stop(server);
}
