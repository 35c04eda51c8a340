// What the runtime itself costs per proxied HTTP/1.1 request, beside what the relay's own code adds: nginx as a proxy, a bare Node byte relay, the same relay parsing both directions with llhttp, and the binary, rotated, CPU (user and system) per request of each under wrk -c50 on the 100-byte file.
// Usage: node bench/cpu-floor.mjs [--rounds 5] [--seconds 3] [--binary dist/readiness-proxy]
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startListening, stop } from "./lib/processes.mjs";
import { median } from "./lib/stats.mjs";
import { runWrk } from "./lib/wrk.mjs";
import { startProxyNginx, startUpstreamNginx } from "./targets/nginx.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : fallback);
const rounds = Number(option("rounds", "5"));
const seconds = Number(option("seconds", "3"));
const binary = option("binary", join(here, "../dist/readiness-proxy"));
const runtime = join(here, `../node_modules/node-linux-${process.arch}/bin/node`);
const floorRelay = join(here, "targets/node-floor-relay.cjs");
// The binary's own V8 flags (sea-config.json), so the floors run as the binary's code does.
const seaFlags = JSON.parse(readFileSync(join(here, "../sea-config.json"), "utf8")).execArgv.filter((flag) => !flag.startsWith("--inspect"));

const PORTS = { upstream: 19700, nginx: 19701, bytes: 19702, llhttp: 19703, ours: 19704 };
const TICKS_PER_SECOND = 100;

/** utime and stime of `pids`, in µs (the kernel's clock ticks). */
function userAndSystem(pids) {
  let user = 0;
  let system = 0;
  for (const pid of pids) {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    user += Number(fields[11]);
    system += Number(fields[12]);
  }
  return { user: (user * 1e6) / TICKS_PER_SECOND, system: (system * 1e6) / TICKS_PER_SECOND };
}

const upstream = await startUpstreamNginx(PORTS.upstream);
const started = [];
try {
  const nginx = await startProxyNginx(PORTS.nginx, PORTS.upstream);
  started.push(nginx.child);
  const spawnOne = async (argv, port) => {
    const child = await startListening(argv, port);
    started.push(child);
    return { pids: () => [child.pid] };
  };
  const targets = [
    { name: "nginx (1 worker)", port: PORTS.nginx, pids: () => nginx.pids().slice(1) },
    { name: "Node byte relay (no parsing)", port: PORTS.bytes, ...(await spawnOne([runtime, ...seaFlags, floorRelay, String(PORTS.bytes), String(PORTS.upstream), "bytes"], PORTS.bytes)) },
    { name: "Node byte relay + llhttp both ways", port: PORTS.llhttp, ...(await spawnOne([runtime, ...seaFlags, floorRelay, String(PORTS.llhttp), String(PORTS.upstream), "llhttp"], PORTS.llhttp)) },
    { name: "readiness-proxy", port: PORTS.ours, ...(await spawnOne([binary, "--listen", `127.0.0.1:${PORTS.ours}`, "--upstream", `http://127.0.0.1:${PORTS.upstream}`, "--log-level", "warn"], PORTS.ours)) },
  ];
  for (const target of targets) await runWrk(`http://127.0.0.1:${target.port}/file`, { seconds: 2 }); // the JIT's warm-up
  const runs = new Map(targets.map((target) => [target.name, []]));
  for (let round = 0; round < rounds; round++) {
    // Rotated: each round starts one target later, so no target always follows the same one.
    const order = targets.map((_, i) => targets[(i + round) % targets.length]);
    for (const target of order) {
      const before = userAndSystem(target.pids());
      const run = await runWrk(`http://127.0.0.1:${target.port}/file`, { connections: 50, seconds });
      const after = userAndSystem(target.pids());
      runs.get(target.name).push({ user: (after.user - before.user) / run.requests, system: (after.system - before.system) / run.requests, rps: run.rps, errors: run.errors });
    }
  }
  const nginxTotal = median(runs.get(targets[0].name).map((run) => run.user + run.system));
  console.log(`CPU per request, wrk -c50 on the 100-byte file, medians of ${rounds} rotated rounds of ${seconds} s:\n`);
  console.log("| target | user µs | system µs | total µs | / nginx | requests/s | errors |");
  console.log("| --- | --- | --- | --- | --- | --- | --- |");
  for (const target of targets) {
    const list = runs.get(target.name);
    const total = median(list.map((run) => run.user + run.system));
    console.log(`| ${target.name} | ${median(list.map((run) => run.user)).toFixed(1)} | ${median(list.map((run) => run.system)).toFixed(1)} | ${total.toFixed(1)} | ${(total / nginxTotal).toFixed(2)}x | ${median(list.map((run) => run.rps)).toFixed(0)} | ${list.reduce((sum, run) => sum + run.errors, 0)} |`);
  }
} finally {
  for (const child of started) await stop(child);
  await stop(upstream.child);
}
