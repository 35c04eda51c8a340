// Section 1c: 1 MiB downloads (the upstream nginx's /big), 10 connections, directly and through nginx and readiness-proxy, rotated: MiB/s and CPU per MiB.
import { cpuMicrosOf } from "../lib/processes.mjs";
import { median, perRound, ratioList, spread, table } from "../lib/stats.mjs";
import { runWrk, shortRunSeconds } from "../lib/wrk.mjs";
import { BASELINE, DIRECT, NGINX, OURS } from "../targets/lineup.mjs";

const KEYS = ["direct", "nginx", "ours", "baseline"];
// Ten: enough to keep a proxy's both sides busy, few enough that 10 MiB in flight is not the measure.
export const DOWNLOAD_CONNECTIONS = 10;

export async function download({ rounds, seconds }, lineup) {
  const targets = lineup.targets.filter((target) => KEYS.includes(target.key));
  const runSeconds = shortRunSeconds(seconds);
  const results = new Map(targets.map((target) => [target.name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const target of targets) {
      const before = cpuMicrosOf(target.pids());
      const run = await runWrk(`http://127.0.0.1:${target.port}/big`, { connections: DOWNLOAD_CONNECTIONS, seconds: runSeconds });
      // Every response is 1 MiB, so requests/s is MiB/s and CPU per request is CPU per MiB.
      results.get(target.name).push({ ...run, mibPerSecond: run.rps, cpuPerMib: (cpuMicrosOf(target.pids()) - before) / run.requests });
      console.error(`  round ${round + 1} ${target.name}: ${run.rps.toFixed(0)} MiB/s, errors ${run.errors}`);
    }
  }
  const rows = targets.map((target) => {
    const runs = results.get(target.name);
    return [
      target.name,
      spread(runs.map((run) => run.mibPerSecond)),
      median(runs.map((run) => run.p99)).toFixed(2),
      spread(runs.map((run) => run.cpuPerMib)),
      String(runs.reduce((sum, run) => sum + run.errors, 0)),
    ];
  });
  const ours = results.get(OURS);
  const lines = [
    `readiness-proxy's MiB/s, per round: against direct ${ratioList(perRound(ours, results.get(DIRECT), "mibPerSecond"))}; against nginx ${ratioList(perRound(ours, results.get(NGINX), "mibPerSecond"))}.`,
  ];
  if (results.has(BASELINE)) lines.push(`Against the --baseline binary, per round: ${ratioList(perRound(ours, results.get(BASELINE), "mibPerSecond"))} (target ≥ 1.00x).`);
  return {
    markdown: [table(["target", "MiB/s", "p99 ms", "CPU µs/MiB (of the serving process)", "errors"], rows), "", ...lines].join("\n"),
    results,
  };
}
