// make soak: mixed traffic through the binary for --seconds (default 600), FD count and RssAnon sampled every 5 s; fails if either does not settle.
// Usage: node bench/soak.mjs [--seconds 600]
import { readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { rssAnonMb, start, stop, waitForPort } from "./lib/processes.mjs";
import { runWrk } from "./lib/wrk.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");
const at = process.argv.indexOf("--seconds");
const seconds = at >= 0 ? Number(process.argv[at + 1]) : 600;
const SAMPLE_MS = 5_000;
const PORTS = { proxy: 19070, upstream: 19071, metrics: 19072 };

// One request in eight of each heavy kind: 1 MiB down, 1 MiB up; /readyz and small GETs the rest.
const script = join(tmpdir(), `rp-soak-${process.pid}.lua`);
writeFileSync(
  script,
  `local upload = string.rep("u", 1048576)
local n = 0
request = function()
  n = n + 1
  local kind = n % 8
  if kind == 0 then return wrk.format("GET", "/big") end
  if kind == 1 then return wrk.format("POST", "/upload", { ["Content-Type"] = "application/octet-stream" }, upload) end
  if kind == 2 or kind == 5 then return wrk.format("GET", "/readyz") end
  return wrk.format("GET", "/small")
end
`,
);

const fdCount = (pid) => readdirSync(`/proc/${pid}/fd`).length;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const upstream = start([process.execPath, join(here, "targets/soak-upstream.mjs"), String(PORTS.upstream)]);
const proxy = start([
  join(root, "dist/readiness-proxy"), "--listen", `127.0.0.1:${PORTS.proxy}`, "--upstream", `http://127.0.0.1:${PORTS.upstream}`,
  "--readiness-required-listener", String(PORTS.upstream), "--metrics-listen", `127.0.0.1:${PORTS.metrics}`, "--log-level", "warn",
]);
let failed = false;
try {
  await Promise.all([PORTS.proxy, PORTS.upstream, PORTS.metrics].map((port) => waitForPort(port)));
  const baselineFds = fdCount(proxy.pid);
  const samples = [];
  const sampler = setInterval(() => samples.push({ t: samples.length * (SAMPLE_MS / 1000), fds: fdCount(proxy.pid), rssMb: rssAnonMb(proxy.pid) }), SAMPLE_MS);
  console.error(`soak: ${seconds} s of mixed traffic, 20 connections; baseline ${baselineFds} FDs, ${rssAnonMb(proxy.pid).toFixed(1)} MB RssAnon`);
  const run = await runWrk(`http://127.0.0.1:${PORTS.proxy}/`, { connections: 20, seconds, script });
  clearInterval(sampler);
  // Connections close when wrk stops, upstream ones after the pool's 4 s idle timeout: wait a bounded while.
  let settledFds = fdCount(proxy.pid);
  for (let waited = 0; settledFds > baselineFds && waited < 15_000; waited += 500) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    settledFds = fdCount(proxy.pid);
  }
  const windowStart = Math.max(0, seconds - 300);
  const inWindow = samples.filter((sample) => sample.t >= windowStart);
  const early = median(inWindow.slice(0, 3).map((sample) => sample.rssMb));
  const late = median(inWindow.slice(-3).map((sample) => sample.rssMb));
  const growth = late / early;
  const lines = [
    `requests: ${run.requests} (${run.rps.toFixed(0)}/s), errors: ${run.errors}`,
    `FDs: baseline ${baselineFds}, max under load ${Math.max(...samples.map((sample) => sample.fds))}, after ${settledFds}`,
    `RssAnon: ${samples.map((sample) => sample.rssMb.toFixed(0)).join(" ")} MB (every ${SAMPLE_MS / 1000} s)`,
    `RssAnon over the last ${seconds - windowStart} s: ${early.toFixed(1)} -> ${late.toFixed(1)} MB (${((growth - 1) * 100).toFixed(1)}%, limit 10%)`,
  ];
  console.log(lines.join("\n"));
  if (settledFds > baselineFds) {
    console.log(`FAIL: FDs did not return to baseline (${settledFds} > ${baselineFds})`);
    failed = true;
  }
  if (growth > 1.1) {
    console.log("FAIL: RssAnon grew more than 10% over the last window");
    failed = true;
  }
  if (run.errors > 0) {
    console.log(`FAIL: ${run.errors} errors`);
    failed = true;
  }
  if (!failed) console.log("soak passed");
} finally {
  await Promise.all([proxy, upstream].map(stop));
}
process.exitCode = failed ? 1 : 0;
