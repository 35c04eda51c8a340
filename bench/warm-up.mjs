// A new replica's first seconds (bench/sections/warm-up.mjs) from the command line: other builds, the bundle under V8-flag variants, and what TurboFan and Maglev still compile after /readyz said 200.
// Usage: node bench/warm-up.mjs [--rounds 2] [--app-start-ms 1500] [--baseline BINARY] [--binary BINARY] [--loads http1,fixed,grpc,grpc-fixed,ready-at-once]
//          [--no-binary] [--no-nginx] [--variant 'label=--v8-flag,...']... [--trace DIR]
import { existsSync, mkdirSync, openSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { seaExecArgv } from "./lib/runtime-stats.mjs";
import { median } from "./lib/stats.mjs";
import { WARM_UP_LOADS, execToReady, warmUp } from "./sections/warm-up.mjs";
import { option } from "./lib/options.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");
const args = process.argv.slice(2);
const options = (name) => args.flatMap((arg, at) => (arg === `--${name}` ? [args[at + 1]] : []));
const rounds = Number(option("rounds", "2"));
const binary = option("binary", join(root, "dist/readiness-proxy"));
const baseline = option("baseline", undefined);
const loads = option("loads", WARM_UP_LOADS.join(",")).split(",");
const appStartMs = Number(option("app-start-ms", "1500"));
const traceDir = option("trace", undefined);
const runtime = join(root, `node_modules/node-linux-${process.arch}/bin/node`);
const bundle = join(root, "dist/readiness-proxy.cjs");

const contenders = [
  ...(args.includes("--no-binary") ? [] : [{ name: "readiness-proxy (this build)", kind: "proxy", argv: [binary] }]),
  ...(baseline ? [{ name: "readiness-proxy (--baseline)", kind: "proxy", argv: [baseline] }] : []),
  // The bundle under the runtime with these flags in place of the SEA's (the V8-flag grid: label=--flag,--flag).
  ...options("variant").map((variant) => {
    const [label, flags] = [variant.slice(0, variant.indexOf("=")), variant.slice(variant.indexOf("=") + 1)];
    return { name: `bundle ${label} (${flags.split(",").join(" ")})`, kind: "proxy", argv: [runtime, ...flags.split(",").filter(Boolean), bundle] };
  }),
  ...(args.includes("--no-nginx") ? [] : [{ name: "nginx proxy", kind: "nginx" }]),
];
// The bundle with the binary's flags, traced: each run's TurboFan and Maglev lines, and where /readyz said 200 in them.
const traces = [];
if (traceDir) {
  mkdirSync(traceDir, { recursive: true });
  const traced = { name: "bundle, the binary's flags, --trace-opt --trace-deopt", kind: "proxy", argv: [runtime, ...seaExecArgv(root), "--trace-opt", "--trace-deopt", bundle] };
  Object.defineProperty(traced, "stdout", {
    get() {
      const file = join(traceDir, `run-${traces.length + 1}.log`);
      traces.push({ file });
      return openSync(file, "w");
    },
  });
  traced.onReady = ({ load }) => Object.assign(traces.at(-1), { load, readyAt: statSync(traces.at(-1).file).size });
  contenders.push(traced);
}
for (const contender of contenders) if (contender.argv && !existsSync(contender.argv[0])) throw new Error(`no binary at ${contender.argv[0]}`);

if (loads.includes("ready-at-once")) {
  for (const [name, values] of await execToReady(contenders, rounds * 5)) console.log(`exec to the first /readyz 200, an app already listening: ${name}: median ${median(values).toFixed(0)} ms (${Math.min(...values).toFixed(0)}-${Math.max(...values).toFixed(0)}), ${values.length} runs`);
}
const { markdown } = await warmUp({ contenders, loads: loads.filter((load) => load !== "ready-at-once"), rounds, appStartMs, root, here });
console.log(markdown);
for (const trace of traces) console.log(`\n${summariseTrace(trace)}`);

/** Compiles and deoptimisations after ready, by function: what the warm-up did not cover. */
function summariseTrace({ file, load, readyAt }) {
  const text = readFileSync(file, "latin1");
  const count = (part, pattern) => [...part.matchAll(pattern)].length;
  const before = text.slice(0, readyAt ?? text.length);
  const after = readyAt === undefined ? "" : text.slice(readyAt);
  const compiled = /\[completed compiling 0x[0-9a-f]+ <JSFunction ([^ >(]*) ?\(sfi[^>]*>\s*\(target (\w+)\)(?: OSR)? - took ([\d.]+), ([\d.]+), ([\d.]+) ms\]/g;
  const byFunction = new Map();
  for (const match of after.matchAll(compiled)) {
    const key = `${match[1] || "(anonymous)"} (${match[2]})`;
    const took = match[3] === undefined ? 0 : Number(match[3]) + Number(match[4]) + Number(match[5]);
    const entry = byFunction.get(key) ?? { count: 0, ms: 0 };
    entry.count++;
    entry.ms += took;
    byFunction.set(key, entry);
  }
  const deopts = new Map();
  for (const match of after.matchAll(/\[bailout \(kind: ([^,]+), reason: ([^)]*)\): begin\. deoptimizing 0x[0-9a-f]+ <JSFunction ([^ >(]*)/g)) {
    const key = `${match[3] || "(anonymous)"}: ${match[2]}`;
    deopts.set(key, (deopts.get(key) ?? 0) + 1);
  }
  const top = [...byFunction].sort((a, b) => b[1].ms - a[1].ms || b[1].count - a[1].count).slice(0, 40);
  return [
    `Trace ${file} (${load}): before ready ${count(before, compiled)} compiles; after ready ${count(after, compiled)} compiles, ${[...byFunction.values()].reduce((sum, entry) => sum + entry.ms, 0).toFixed(1)} ms, ${[...deopts.values()].reduce((sum, value) => sum + value, 0)} deoptimisations.`,
    ...top.map(([name, entry]) => `  ${entry.ms.toFixed(2)} ms, ${entry.count}x ${name}`),
    ...[...deopts].sort((a, b) => b[1] - a[1]).slice(0, 25).map(([name, times]) => `  deopt ${times}x ${name}`),
  ].join("\n");
}
