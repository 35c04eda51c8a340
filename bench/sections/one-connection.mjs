// Section 1b: one request in flight, directly and through nginx, the peers and readiness-proxy, interleaved request by request: the latency each proxy adds over direct.
import { interleavedLatency, quantile } from "../lib/latency-client.mjs";
import { median, spread, table } from "../lib/stats.mjs";
import { shortRunSeconds } from "../lib/wrk.mjs";
import { BASELINE, DIRECT, NGINX, OURS } from "../targets/lineup.mjs";

// The Node peers are left out: section 1 already places us against them, and this is about the floor.
const KEYS = ["direct", "nginx", "haproxy", "caddy", "go", "ours", "baseline"];

/**
 * Rounds of interleaved requests (not one wrk -c1 run per target after another): a stall of the
 * shared machine lands on whichever target is in flight, so over thousands of requests on every
 * target alike, and a p99 less direct's p99 measures the proxy rather than the neighbours.
 */
export async function oneConnection({ rounds, seconds }, lineup) {
  const targets = lineup.targets.filter((target) => KEYS.includes(target.key));
  // As long in all as a wrk -c1 run of shortRunSeconds per target would take.
  const roundSeconds = shortRunSeconds(seconds) * targets.length;
  const results = new Map(targets.map((target) => [target.name, []]));
  for (let round = 0; round < rounds; round++) {
    const samples = await interleavedLatency(targets, { path: "/file", seconds: roundSeconds });
    const direct = samples.get(DIRECT).ms;
    for (const target of targets) {
      const { ms, errors } = samples.get(target.name);
      const p50 = quantile(ms, 0.5);
      const p99 = quantile(ms, 0.99);
      results.get(target.name).push({ requests: ms.length, errors, p50, p99, addedP50: p50 - quantile(direct, 0.5), addedP99: p99 - quantile(direct, 0.99) });
    }
    console.error(`  round ${round + 1}: ${targets.map((target) => `${target.name} p99 ${(results.get(target.name)[round].p99 * 1000).toFixed(0)} µs`).join(", ")}`);
  }
  const micros = (runs, key) => spread(runs.map((run) => run[key] * 1000));
  const rows = targets.map((target) => {
    const runs = results.get(target.name);
    const isDirect = target.name === DIRECT;
    return [
      target.name,
      spread(runs.map((run) => run.requests)),
      micros(runs, "p50"),
      micros(runs, "p99"),
      isDirect ? "-" : micros(runs, "addedP50"),
      isDirect ? "-" : micros(runs, "addedP99"),
      String(runs.reduce((sum, run) => sum + run.errors, 0)),
    ];
  });
  const lines = [`Added p99, readiness-proxy / nginx: ${addedRatios(results.get(OURS), results.get(NGINX), "addedP99")} (target ≤ 2.00x).`];
  lines.push(`Added p50, readiness-proxy / nginx: ${addedRatios(results.get(OURS), results.get(NGINX), "addedP50")}.`);
  if (results.has(BASELINE)) lines.push(`Added p99, readiness-proxy / the --baseline binary: ${addedRatios(results.get(OURS), results.get(BASELINE), "addedP99")}.`);
  return {
    markdown: [table(["target", "requests per round", "p50 µs", "p99 µs", "added p50 over direct, µs", "added p99 over direct, µs", "errors"], rows), "", ...lines].join("\n"),
    results,
  };
}

/**
 * Per round, and of the medians. A round where the peer added nothing measurable (its p99 at or
 * below direct's: the noise was larger than the proxy) has no ratio, and says so.
 */
function addedRatios(ours, peer, key) {
  const perRound = ours.map((run, round) => (peer[round][key] > 0 ? `${(run[key] / peer[round][key]).toFixed(2)}x` : "n/a (peer added ≤ 0)"));
  const peerMedian = median(peer.map((run) => run[key]));
  const ofMedians = peerMedian > 0 ? `${(median(ours.map((run) => run[key])) / peerMedian).toFixed(2)}x` : "n/a";
  return `per round ${perRound.join(", ")}; of the medians ${ofMedians}`;
}
