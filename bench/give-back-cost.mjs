// Issue 38: what a memory give-back after the h2 load costs. Per kind of collection (none, a plain major one, V8's memory-reducing "last resort"): RssAnon before and after it, the optimized code it marks for deoptimization, and CPU per request of the next load against the one before.
// Usage: node bench/give-back-cost.mjs [--rounds 3] [--seconds 4] [--bundle dist/readiness-proxy.cjs]
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runH2load } from "./lib/h2load.mjs";
import { cpuMicros, rssAnonMb, startListening, stop } from "./lib/processes.mjs";
import { seaExecArgv } from "./lib/runtime-stats.mjs";
import { median } from "./lib/stats.mjs";
import { startH2cUpstreamNginx } from "./targets/nginx.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");
const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : fallback);
const rounds = Number(option("rounds", "3"));
const seconds = Number(option("seconds", "4"));
const bundle = option("bundle", join(root, "dist/readiness-proxy.cjs"));
const KINDS = ["none", "major", "last-resort"];
const UPSTREAM_PORT = 19180;
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const upstream = await startH2cUpstreamNginx(UPSTREAM_PORT);
const proxies = [];
try {
  for (const [index, kind] of KINDS.entries()) {
    const port = UPSTREAM_PORT + 1 + index;
    const argv = [
      join(root, `node_modules/node-linux-${process.arch}/bin/node`), ...seaExecArgv(root), "--trace-deopt", "--require", join(here, "lib/collect-on-signal-preload.cjs"), bundle,
      "--listen", `127.0.0.1:${port}`, "--upstream", `http://127.0.0.1:${UPSTREAM_PORT}`, "--upstream-protocol", "h2c", "--log-level", "warn",
    ];
    const child = await startListening(argv, port, { env: { ...process.env, BENCH_COLLECTION: kind }, stdout: "pipe" });
    const proxy = { kind, port, child, trace: "", rows: [] };
    // --trace-deopt writes to stdout; read so that the pipe never fills.
    child.stdout.on("data", (chunk) => (proxy.trace += chunk));
    proxies.push(proxy);
  }
  const load = async (proxy) => {
    const before = cpuMicros(proxy.child.pid);
    const run = await runH2load(`http://127.0.0.1:${proxy.port}/file`, { clients: 10, streams: 10, seconds });
    return (cpuMicros(proxy.child.pid) - before) / run.requests;
  };
  for (const proxy of proxies) await load(proxy); // the JIT's warm-up
  for (let round = 0; round < rounds; round++) {
    for (const proxy of proxies) {
      const cpuBefore = await load(proxy);
      const rssAtEnd = rssAnonMb(proxy.child.pid);
      await pause(500);
      const mark = proxy.trace.length;
      proxy.child.kill("SIGUSR2");
      await pause(1_500);
      const deoptimized = (proxy.trace.slice(mark).match(/for deoptimization/g) ?? []).length;
      const rssAfter = rssAnonMb(proxy.child.pid);
      const cpuAfter = await load(proxy);
      proxy.rows.push({ rssAtEnd, rssAfter, deoptimized, ratio: cpuAfter / cpuBefore });
    }
  }
  console.log("| collection after the load | RssAnon at the load's end, MB | 1.5 s after the collection, MB | code marked for deoptimization | next load's CPU per request / the load's before (per round) |");
  console.log("| --- | --- | --- | --- | --- |");
  for (const { kind, rows } of proxies) {
    const m = (key, digits) => median(rows.map((row) => row[key])).toFixed(digits);
    console.log(`| ${kind} | ${m("rssAtEnd", 1)} | ${m("rssAfter", 1)} | ${m("deoptimized", 0)} | ${m("ratio", 2)} (${rows.map((row) => row.ratio.toFixed(2)).join(", ")}) |`);
  }
} finally {
  for (const proxy of proxies) await stop(proxy.child);
  await stop(upstream.child);
}
