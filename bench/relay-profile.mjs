// Issues 28 and 53: where the HTTP/1.1 relay's time or allocation goes under load. The bundle under the embedded runtime, wrk -c50 on the 100-byte file from nginx; prints CPU per request and a --cpu-prof summary (with the time under the access line's functions per request), or with --heap bytes allocated per request by allocation site (what the runtime allocates charged to the function of ours that called it).
// Usage: node bench/relay-profile.mjs [--seconds 8] [--access-log] [--heap] [--top 25] [--bundle PATH]
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { openLogPipe } from "./lib/log-pipe.mjs";
import { cpuMicros, startListening, stop } from "./lib/processes.mjs";
import { seaExecArgv } from "./lib/runtime-stats.mjs";
import { runWrk } from "./lib/wrk.mjs";
import { startUpstreamNginx } from "./targets/nginx.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : fallback);
const seconds = Number(option("seconds", "8"));
const accessLog = args.includes("--access-log");
const heap = args.includes("--heap");
const top = option("top", "25");
/** The functions that gather and write the access line (RequestRecord.finished's entry, the encoder, the batch and its flush). */
const ACCESS_LINE_FUNCTIONS = "finished,record,writeEncoded,encode,requestIdOf,randomUuid,traceIdOf,flush";
const bundle = option("bundle", join(here, "../dist/readiness-proxy.cjs"));
const runtime = join(here, `../node_modules/node-linux-${process.arch}/bin/node`);
const dir = mkdtempSync(join(tmpdir(), "rp-bench-relay-profile-"));
const heapProfile = join(dir, "relay.heapprofile");
// The binary's own V8 flag (sea-config.json); the profile of time, or the heap sampler, on top.
const flags = [...seaExecArgv(join(here, "..")), ...(heap ? ["--require", join(here, "lib/heap-sampling-preload.cjs")] : ["--cpu-prof", `--cpu-prof-dir=${dir}`, "--cpu-prof-interval", "200"])];
const upstream = await startUpstreamNginx(19290);
// With --access-log, stdout is a FIFO drained here, as a container runtime gives it.
const logPipe = accessLog ? openLogPipe() : undefined;
try {
  const argv = [runtime, ...flags, bundle, "--listen", "127.0.0.1:19291", "--upstream", "http://127.0.0.1:19290", ...(accessLog ? ["--access-log", "--log-level", "info"] : ["--log-level", "warn"])];
  const proxy = await startListening(argv, 19291, { env: { ...process.env, BENCH_HEAP_PROFILE: heapProfile }, ...(logPipe ? { stdout: logPipe.fd } : {}) });
  logPipe?.closeWriteEnd();
  await runWrk("http://127.0.0.1:19291/file", { seconds: 2 }); // the JIT's warm-up, outside the heap sample
  if (heap) proxy.kill("SIGUSR2");
  const before = cpuMicros(proxy.pid);
  const run = await runWrk("http://127.0.0.1:19291/file", { seconds });
  const used = cpuMicros(proxy.pid) - before;
  if (heap) proxy.kill("SIGUSR2");
  console.log(`relay${accessLog ? " with --access-log" : ""}: ${run.requests} requests, ${(used / run.requests).toFixed(1)} µs CPU per request${heap ? " (under the heap sampler)" : ""}, ${run.errors} errors`);
  if (heap) await new Promise((resolve) => setTimeout(resolve, 1000)); // the profile is written from the daemon's loop
  await stop(proxy); // SIGTERM: the daemon exits normally, so a CPU profile is written
  if (heap) console.log(execFileSync(process.execPath, [join(here, "lib/heap-profile-summary.mjs"), heapProfile, String(run.requests), top, "--sites"], { encoding: "utf8" }));
  else {
    const [profile] = readdirSync(dir).filter((name) => name.endsWith(".cpuprofile"));
    console.log("(the profile covers the warm-up too; a share of its samples is read as that share of the run's CPU per request)");
    console.log(execFileSync(process.execPath, [join(here, "lib/profile-summary.mjs"), join(dir, profile), top, ...(accessLog ? ["--inclusive", ACCESS_LINE_FUNCTIONS] : []), "--cpu-per-request", (used / run.requests).toFixed(2)], { encoding: "utf8" }));
  }
} finally {
  logPipe?.close();
  await stop(upstream.child);
  rmSync(dir, { recursive: true, force: true });
}
