// Two readiness-proxy binaries loaded at the same time, each by its own load generator, so both meet the same neighbours' noise: CPU per request of each and their ratio, per round and the median. For a change small beside this machine's ±25% run-to-run swings.
// Usage: node bench/side-by-side.mjs --baseline PATH [--binary dist/readiness-proxy] [--load http1|h2c|auto] [--rounds 5] [--seconds 4]
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runH2load } from "./lib/h2load.mjs";
import { cpuMicrosOf, startListening, stop } from "./lib/processes.mjs";
import { median } from "./lib/stats.mjs";
import { runWrk } from "./lib/wrk.mjs";
import { startH2cUpstreamNginx, startUpstreamNginx } from "./targets/nginx.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : fallback);
const binary = option("binary", join(here, "../dist/readiness-proxy"));
const baseline = option("baseline", undefined);
const load = option("load", "http1");
const rounds = Number(option("rounds", "5"));
const seconds = Number(option("seconds", "4"));
if (baseline === undefined || !["http1", "h2c", "auto"].includes(load)) {
  console.error("usage: node bench/side-by-side.mjs --baseline PATH [--binary PATH] [--load http1|h2c|auto] [--rounds 5] [--seconds 4]");
  process.exit(2);
}

const PORTS = { upstream: 19500, binary: 19501, baseline: 19502 };
// http1: wrk, 20 keep-alive connections each (section 1's file); h2c and auto: h2load -c5 -m10 each, to an h2c nginx (section 7's file).
const upstream = load === "http1" ? await startUpstreamNginx(PORTS.upstream) : await startH2cUpstreamNginx(PORTS.upstream);
const startProxy = (path, port) =>
  startListening([path, "--listen", `127.0.0.1:${port}`, "--upstream", `http://127.0.0.1:${PORTS.upstream}`, ...(load === "http1" ? [] : ["--upstream-protocol", load]), "--log-level", "warn", "--shutdown-delay", "0s"], port);
const drive = (port, runSeconds) => {
  const url = `http://127.0.0.1:${port}/file`;
  return load === "http1" ? runWrk(url, { connections: 20, seconds: runSeconds }) : runH2load(url, { clients: 5, streams: 10, seconds: runSeconds });
};

const contenders = [
  { name: "binary", path: binary, port: PORTS.binary },
  { name: "baseline", path: baseline, port: PORTS.baseline },
];
try {
  for (const contender of contenders) contender.child = await startProxy(contender.path, contender.port);
  await Promise.all(contenders.map((contender) => drive(contender.port, 2))); // the JIT's warm-up, at once
  const ratios = [];
  for (let round = 0; round < rounds; round++) {
    const before = contenders.map((contender) => cpuMicrosOf([contender.child.pid]));
    const runs = await Promise.all(contenders.map((contender) => drive(contender.port, seconds)));
    const perRequest = contenders.map((contender, index) => (cpuMicrosOf([contender.child.pid]) - before[index]) / runs[index].requests);
    const errors = runs.map((run) => run.errors);
    ratios.push(perRequest[0] / perRequest[1]);
    console.log(`round ${round + 1}: binary ${perRequest[0].toFixed(1)} µs/request (${runs[0].requests}, errors ${errors[0]}), baseline ${perRequest[1].toFixed(1)} µs/request (${runs[1].requests}, errors ${errors[1]}): ${ratios.at(-1).toFixed(3)}x`);
  }
  console.log(`${load}: binary / baseline, CPU per request, loaded at once: ${ratios.map((ratio) => `${ratio.toFixed(2)}x`).join(", ")}; median ${median(ratios).toFixed(3)}x`);
} finally {
  await Promise.all(contenders.filter((contender) => contender.child !== undefined).map((contender) => stop(contender.child)));
  await stop(upstream.child);
}
