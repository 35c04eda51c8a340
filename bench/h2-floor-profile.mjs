// Issue 25: where node:http2's floor goes. The core-API proxy (targets/node-h2-floor.mjs) under h2load -c10 -m10 with --cpu-prof; prints CPU per request and the profile by where the time is.
// Usage: node bench/h2-floor-profile.mjs [--seconds 5]
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runH2load } from "./lib/h2load.mjs";
import { cpuMicros, startListening, stop } from "./lib/processes.mjs";
import { startH2cUpstreamNginx } from "./targets/nginx.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const at = process.argv.indexOf("--seconds");
const seconds = at > 0 ? Number(process.argv[at + 1]) : 5;
const runtime = join(here, `../node_modules/node-linux-${process.arch}/bin/node`);
const profiles = mkdtempSync(join(tmpdir(), "rp-bench-h2-floor-"));
const upstream = await startH2cUpstreamNginx(19198);
try {
  const proxy = await startListening([runtime, "--cpu-prof", `--cpu-prof-dir=${profiles}`, join(here, "targets/node-h2-floor.mjs"), "19199", "http://127.0.0.1:19198"], 19199);
  await runH2load("http://127.0.0.1:19199/file", { seconds: 2 }); // the JIT's warm-up
  const before = cpuMicros(proxy.pid);
  const run = await runH2load("http://127.0.0.1:19199/file", { seconds });
  console.log(`node:http2 floor: ${run.requests} requests, ${((cpuMicros(proxy.pid) - before) / run.requests).toFixed(1)} µs CPU per request, ${run.errors} errors (the profile covers the warm-up too)`);
  await stop(proxy); // SIGTERM: the target exits normally, so the profile is written
  const [profile] = readdirSync(profiles).filter((name) => name.endsWith(".cpuprofile"));
  console.log(execFileSync(process.execPath, [join(here, "lib/profile-summary.mjs"), join(profiles, profile), "15"], { encoding: "utf8" }));
} finally {
  await stop(upstream.child);
}
