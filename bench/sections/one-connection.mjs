// Section 1b: one keep-alive connection (wrk -c1) directly and through nginx, the peers and readiness-proxy, rotated: the p99 each proxy adds over direct.
import { cpuMicrosOf } from "../lib/processes.mjs";
import { median, perRound, ratioList, spread, table } from "../lib/stats.mjs";
import { runWrk, shortRunSeconds } from "../lib/wrk.mjs";
import { BASELINE, DIRECT, NGINX, OURS } from "../targets/lineup.mjs";

// The Node peers are left out: section 1 already places us against them, and this is about the floor.
const KEYS = ["direct", "nginx", "haproxy", "caddy", "go", "ours", "baseline"];

export async function oneConnection({ rounds, seconds }, lineup) {
  const targets = lineup.targets.filter((target) => KEYS.includes(target.key));
  const runSeconds = shortRunSeconds(seconds);
  const results = new Map(targets.map((target) => [target.name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const target of targets) {
      const before = cpuMicrosOf(target.pids());
      const run = await runWrk(`http://127.0.0.1:${target.port}/file`, { connections: 1, seconds: runSeconds });
      const cpuPerRequest = (cpuMicrosOf(target.pids()) - before) / run.requests;
      results.get(target.name).push({ ...run, cpuPerRequest });
      console.error(`  round ${round + 1} ${target.name}: p99 ${(run.p99 * 1000).toFixed(0)} µs, ${run.rps.toFixed(0)} rps, errors ${run.errors}`);
    }
  }
  // Added p99 per round: each proxy's p99 less direct's from the same round.
  const direct = results.get(DIRECT);
  for (const runs of results.values()) runs.forEach((run, round) => (run.addedP99 = run.p99 - direct[round].p99));
  const micros = (values) => spread(values.map((ms) => ms * 1000));
  const rows = targets.map((target) => {
    const runs = results.get(target.name);
    return [
      target.name,
      spread(runs.map((run) => run.rps)),
      micros(runs.map((run) => run.p50)),
      micros(runs.map((run) => run.p99)),
      target.name === DIRECT ? "-" : micros(runs.map((run) => run.addedP99)),
      spread(runs.map((run) => run.cpuPerRequest), 1),
      String(runs.reduce((sum, run) => sum + run.errors, 0)),
    ];
  });
  const ours = results.get(OURS);
  const lines = [`Added p99, readiness-proxy / nginx, per round: ${ratioList(perRound(ours, results.get(NGINX), "addedP99"))} (target ≤ 2.00x).`];
  if (results.has(BASELINE)) lines.push(`Added p99, readiness-proxy / the --baseline binary, per round: ${ratioList(perRound(ours, results.get(BASELINE), "addedP99"))}.`);
  return {
    markdown: [table(["target", "requests/s", "p50 µs", "p99 µs", "added p99 over direct, µs", "CPU µs/request", "errors"], rows), "", ...lines].join("\n"),
    results,
  };
}
