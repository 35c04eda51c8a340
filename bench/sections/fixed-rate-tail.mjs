// Section 1d: the tail under a steady load: an open-loop client at 2,000 and 10,000 req/s over 50 keep-alive connections, every request timed from when it was due, directly and through nginx, HAProxy and readiness-proxy, rotated; the GC pauses over 250 µs and the requests they held up.
import { fixedRate } from "../lib/fixed-rate-client.mjs";
import { gcDelays, LONG_PAUSE_MS } from "../lib/gc-delays.mjs";
import { quantile } from "../lib/latency-client.mjs";
import { cpuMicrosOf, rssAnonMbOf } from "../lib/processes.mjs";
import { startInstrumentedBundle } from "../lib/runtime-stats.mjs";
import { median, spread, table } from "../lib/stats.mjs";
import { BASELINE, DIRECT, NGINX, OURS, leftOutNote, startLineup } from "../targets/lineup.mjs";

export const TAIL_RATES = [2000, 10000];
export const TAIL_CONNECTIONS = 50;
/** p99.9 wants thousands of samples a run: at 2,000 req/s, 8 s are 16,000. */
export const tailSeconds = (seconds) => Math.max(seconds, 8);
const PORTS = { direct: 19210, nginx: 19211, haproxy: 19212, ours: 19213, baseline: 19214, bundle: 19215 };
const HAPROXY = "HAProxy (nbthread 1, http-reuse always)";
export const BUNDLE = "readiness-proxy (bundle, the binary's flags, GC observed)";

/**
 * Every target loaded alone at each rate in turn, the order rotated by one each round (a
 * neighbour's burst lands on a different target each time); added = the target's quantile less
 * direct's in the same round at the same rate.
 */
export async function fixedRateTail({ rounds, seconds, runtime, binary, baseline, here, root }) {
  const runSeconds = tailSeconds(seconds);
  const lineup = await startLineup({ keys: ["nginx", "haproxy", "ours", ...(baseline ? ["baseline"] : [])], ports: PORTS, runtime, binary, baseline, here, root });
  const { targets } = lineup;
  try {
    // The bundle as the binary runs it, with the preload's GC observer: its pauses lined up with the requests.
    const upstreamArgs = ["--listen", `127.0.0.1:${PORTS.bundle}`, "--upstream", `http://127.0.0.1:${PORTS.direct}`, "--log-level", "warn"];
    const bundle = await startInstrumentedBundle({ runtime, root, here, port: PORTS.bundle, args: upstreamArgs });
    targets.push({ key: "bundle", name: BUNDLE, port: PORTS.bundle, child: bundle.child, pids: () => [bundle.child.pid], read: bundle.read });
    // The JIT's warm-up and every connection open, at the lower rate.
    for (const target of targets) await fixedRate(target.port, { rate: TAIL_RATES[0], seconds: 2, connections: TAIL_CONNECTIONS });
    const results = new Map(TAIL_RATES.map((rate) => [rate, new Map(targets.map((target) => [target.name, []]))]));
    for (let round = 0; round < rounds; round++) {
      for (const rate of TAIL_RATES) {
        const order = targets.map((_target, at) => targets[(at + round) % targets.length]);
        const runs = new Map();
        for (const target of order) runs.set(target.name, await runAt(target, rate, runSeconds));
        const direct = runs.get(DIRECT);
        for (const target of targets) {
          const run = runs.get(target.name);
          for (const key of ["p50", "p99", "p999"]) run[`added_${key}`] = run[key] - direct[key];
          results.get(rate).get(target.name).push(run);
        }
        const ours = runs.get(OURS);
        console.error(`  round ${round + 1} at ${rate}/s: ${targets.map((target) => `${target.key} +p99 ${runs.get(target.name).added_p99.toFixed(0)} µs`).join(", ")}; ours p99.9 ${ours.p999.toFixed(0)} µs`);
      }
    }
    return { markdown: render(targets, results, runSeconds) + leftOutNote(lineup.leftOut), results };
  } finally {
    // The bundle is in the lineup's targets: stopped with them.
    await lineup.stop();
  }
}

async function runAt(target, rate, seconds) {
  const cpuBefore = cpuMicrosOf(target.pids());
  if (target.read) await target.read(); // empties the preload's GC list
  const run = await fixedRate(target.port, { rate, seconds, connections: TAIL_CONNECTIONS, record: Boolean(target.read) });
  const cpuPerRequest = (cpuMicrosOf(target.pids()) - cpuBefore) / (rate * seconds);
  const all = run.slices.flat();
  const result = { p50: quantile(all, 0.5), p99: quantile(all, 0.99), p999: quantile(all, 0.999), cpuPerRequest, rssMb: rssAnonMbOf(target.pids()), errors: run.errors };
  if (target.read) result.gc = gcDelays((await target.read()).gcEvents, run.due, run.done);
  return result;
}

function render(targets, results, runSeconds) {
  const parts = [];
  for (const [rate, byTarget] of results) {
    const rows = targets.map((target) => {
      const runs = byTarget.get(target.name);
      const isDirect = target.name === DIRECT;
      const of = (key) => spread(runs.map((run) => run[key]));
      return [
        target.name,
        of("p50"),
        of("p99"),
        of("p999"),
        isDirect ? "-" : of("added_p50"),
        isDirect ? "-" : of("added_p99"),
        isDirect ? "-" : of("added_p999"),
        spread(runs.map((run) => run.cpuPerRequest), 1),
        spread(runs.map((run) => run.rssMb), 1),
        String(runs.reduce((sum, run) => sum + run.errors, 0)),
      ];
    });
    parts.push(`At ${rate.toLocaleString("en")} req/s (${runSeconds} s a run, ${(rate * runSeconds).toLocaleString("en")} requests), µs:`, "");
    parts.push(table(["target", "p50", "p99", "p99.9", "added p50", "added p99", "added p99.9", "CPU µs/request", "RssAnon after, MB", "errors"], rows), "");
    for (const peer of [NGINX, HAPROXY]) {
      if (!byTarget.has(peer)) continue;
      for (const key of ["added_p99", "added_p999"]) parts.push(`${key === "added_p99" ? "Added p99" : "Added p99.9"}, readiness-proxy / ${peer.split(" ")[0]}: ${addedRatios(byTarget.get(OURS), byTarget.get(peer), key)}${peer === NGINX ? " (target ≤ 2.00x, stretch 1.20x)" : ""}.`);
    }
    if (byTarget.has(BASELINE)) parts.push(`Added p99, readiness-proxy / the --baseline binary: ${addedRatios(byTarget.get(OURS), byTarget.get(BASELINE), "added_p99")}.`);
    parts.push("");
  }
  const gcRows = [...results].map(([rate, byTarget]) => {
    const runs = byTarget.get(BUNDLE).map((run) => run.gc).filter(Boolean);
    const of = (key, digits = 1, scale = 1) => spread(runs.map((gc) => gc[key] * scale), digits);
    return [`${rate.toLocaleString("en")} req/s`, of("gcsPerSecond"), of("scavengesPerSecond"), of("longPerSecond"), of("longMedianUs", 0), of("longMaxUs", 0), of("delayedPerPause", 0), `${of("delayedShare", 2, 100)}%`];
  });
  parts.push(`GC pauses of the bundle under the same loads (\`${BUNDLE}\`: the preload's PerformanceObserver gc entries lined up with each request's due and answered time):`, "");
  parts.push(table(["rate", "GCs per s", "scavenges per s", `pauses over ${LONG_PAUSE_MS * 1000} µs per s`, "their median µs", "longest µs", "requests each delayed (median)", "requests delayed by one"], gcRows));
  return parts.join("\n");
}

/** Per round, and of the medians; a round where the peer added nothing measurable has no ratio. */
function addedRatios(ours, peer, key) {
  const perRound = ours.map((run, round) => (peer[round][key] > 0 ? `${(run[key] / peer[round][key]).toFixed(2)}x` : "n/a"));
  const peerMedian = median(peer.map((run) => run[key]));
  return `per round ${perRound.join(", ")}; of the medians ${peerMedian > 0 ? `${(median(ours.map((run) => run[key])) / peerMedian).toFixed(2)}x` : "n/a"}`;
}
