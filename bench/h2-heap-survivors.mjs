// Issue 38: V8 heap allocations of the bundle that outlive the young generation under section 7's h2c load (h2load -c10 -m10 through --upstream-protocol h2c to an h2c nginx), by allocating function, per request; with --all, every allocation.
// Usage: node bench/h2-heap-survivors.mjs [--seconds 5] [--all] [--bundle dist/readiness-proxy.cjs]
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runH2load } from "./lib/h2load.mjs";
import { startListening, stop } from "./lib/processes.mjs";
import { seaExecArgv } from "./lib/runtime-stats.mjs";
import { startH2cUpstreamNginx } from "./targets/nginx.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");
const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : fallback);
const seconds = Number(option("seconds", "5"));
const bundle = option("bundle", join(root, "dist/readiness-proxy.cjs"));
const PORTS = { upstream: 19170, proxy: 19171 };
const upstream = await startH2cUpstreamNginx(PORTS.upstream);
const heapProfile = join(mkdtempSync(join(tmpdir(), "rp-bench-h2-heap-")), "h2.heapprofile");
const argv = [
  join(root, `node_modules/node-linux-${process.arch}/bin/node`), ...seaExecArgv(root), "--require", join(here, "lib/heap-sampling-preload.cjs"), bundle,
  "--listen", `127.0.0.1:${PORTS.proxy}`, "--upstream", `http://127.0.0.1:${PORTS.upstream}`, "--upstream-protocol", "h2c", "--log-level", "warn", "--shutdown-delay", "0s",
];
const env = { ...process.env, BENCH_HEAP_PROFILE: heapProfile, BENCH_HEAP_SURVIVORS: args.includes("--all") ? "0" : "1" };
const proxy = await startListening(argv, PORTS.proxy, { env });
try {
  const url = `http://127.0.0.1:${PORTS.proxy}/file`;
  await runH2load(url, { clients: 10, streams: 10, seconds: 2 }); // the JIT's warm-up, outside the sample
  proxy.kill("SIGUSR2");
  const run = await runH2load(url, { clients: 10, streams: 10, seconds });
  proxy.kill("SIGUSR2");
  // The profile is written from the daemon's loop, a larger one later: waited for, at most 10 s.
  for (let waited = 0; waited < 10_000 && !existsSync(heapProfile); waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
  console.log(`${run.requests} requests, ${run.errors} errors; ${args.includes("--all") ? "every allocation" : "what no scavenge freed"}:`);
  console.log(execFileSync(process.execPath, [join(here, "lib/heap-profile-summary.mjs"), heapProfile, String(run.requests)], { encoding: "utf8" }));
} finally {
  await stop(proxy);
  await stop(upstream.child);
}
