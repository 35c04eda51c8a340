// Section 1: the same 100-byte file fetched directly and through each proxy, rotated, with proxy CPU per request and RssAnon after the load.
import { cpuMicrosOf, rssAnonMb, rssAnonMbOf } from "../lib/processes.mjs";
import { median, perRound, ratioList, spread, table } from "../lib/stats.mjs";
import { runWrk } from "../lib/wrk.mjs";
import { BASELINE, DIRECT, NGINX, OURS, OURS_WITH_ACCESS_LOG, OURS_WITH_LIMIT, OURS_WITH_METRICS, leftOutNote, startLineup } from "../targets/lineup.mjs";

// 19001-19007 as before issue 19; the peers it added take 19008, 19009 and 19000, --baseline 19011; issue 21's variants 19040 and 19041.
const PORTS = {
  direct: 19001,
  nginx: 19002,
  httpProxy: 19003,
  replyFrom: 19004,
  ours: 19005,
  oursMetrics: 19006,
  metricsListener: 19007,
  haproxy: 19008,
  caddy: 19009,
  go: 19000,
  baseline: 19011,
  oursLimit: 19040,
  oursAccessLog: 19041,
};
const KEYS = ["nginx", "haproxy", "caddy", "go", "httpProxy", "replyFrom", "ours", "oursMetrics", "oursLimit", "oursAccessLog", "baseline"];
// Our variants with a feature on: not peers, each compared with the plain binary per round.
const VARIANTS = [OURS_WITH_METRICS, OURS_WITH_LIMIT, OURS_WITH_ACCESS_LOG];

// Node's JIT wants a couple of seconds of load before it is measured; native servers one.
const JIT_WARMED = new Set(["httpProxy", "replyFrom", "ours", "oursMetrics", "oursLimit", "oursAccessLog", "baseline"]);

/**
 * Starts every contender of sections 1, 1b and 1c (they share it: one start, one warm-up) and
 * warms each up under load. The caller stops it.
 */
export async function startProxyLineup({ runtime, binary, baseline, here, root }) {
  const keys = KEYS.filter((key) => key !== "baseline" || baseline);
  const lineup = await startLineup({ keys, ports: PORTS, runtime, binary, baseline, here, root });
  try {
    for (const target of lineup.targets) await runWrk(`http://127.0.0.1:${target.port}/file`, { seconds: JIT_WARMED.has(target.key) ? 2 : 1 });
  } catch (error) {
    await lineup.stop();
    throw error;
  }
  return lineup;
}

export async function proxyOverhead({ rounds, seconds }, lineup) {
  const { targets } = lineup;
  const results = new Map(targets.map((target) => [target.name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const target of targets) {
      const before = cpuMicrosOf(target.pids());
      const loggedBefore = target.loggedBytes?.();
      const run = await runWrk(`http://127.0.0.1:${target.port}/file`, { connections: 50, seconds });
      const cpuPerRequest = (cpuMicrosOf(target.pids()) - before) / run.requests;
      // Read as soon as wrk has ended: what the load left behind, before any idle-time shrinking.
      const rssMb = rssAnonMbOf(target.pids());
      // Proof that lines flow, approximate: under this load the binary's writer can end a run a second behind, and that backlog counts toward the next run.
      const loggedPerRequest = target.loggedBytes ? (target.loggedBytes() - loggedBefore) / run.requests : undefined;
      results.get(target.name).push({ ...run, cpuPerRequest, rssMb, loggedPerRequest });
      const logged = loggedPerRequest === undefined ? "" : `, ${loggedPerRequest.toFixed(0)} stdout bytes/req`;
      console.error(`  round ${round + 1} ${target.name}: ${run.rps.toFixed(0)} rps, ${cpuPerRequest.toFixed(1)} µs/req, RssAnon ${rssMb.toFixed(1)} MB, errors ${run.errors}${logged}`);
    }
  }
  const ours = targets.find((target) => target.name === OURS);
  const rssAfterRunMb = rssAnonMb(ours.child.pid);
  return { markdown: render(targets, results) + leftOutNote(lineup.leftOut), results, rssAfterRunMb };
}

function render(targets, results) {
  const rows = targets.map((target) => {
    const runs = results.get(target.name);
    return [
      target.name,
      spread(runs.map((run) => run.rps)),
      median(runs.map((run) => run.p50)).toFixed(2),
      median(runs.map((run) => run.p99)).toFixed(2),
      spread(runs.map((run) => run.cpuPerRequest), 1),
      spread(runs.map((run) => run.rssMb), 1),
      String(runs.reduce((sum, run) => sum + run.errors, 0)),
    ];
  });
  const ours = results.get(OURS);
  const nginx = results.get(NGINX);
  const ourCpu = median(ours.map((run) => run.cpuPerRequest));
  const ourRps = median(ours.map((run) => run.rps));
  const peers = targets.filter((target) => ![OURS, DIRECT, BASELINE, ...VARIANTS].includes(target.name));
  const relative = peers.map((target) => {
    const runs = results.get(target.name);
    return [
      target.name,
      `${(ourCpu / median(runs.map((run) => run.cpuPerRequest))).toFixed(2)}x`,
      `${(ourRps / median(runs.map((run) => run.rps))).toFixed(2)}x`,
    ];
  });
  // Per round, so each ratio compares two runs made minutes apart at most, under the same neighbours.
  const cpuVsNginx = perRound(ours, nginx, "cpuPerRequest");
  const rpsVsNginx = perRound(ours, nginx, "rps");
  const metricsCost = perRound(results.get(OURS_WITH_METRICS), ours, "cpuPerRequest");
  const limiterCost = perRound(results.get(OURS_WITH_LIMIT), ours, "cpuPerRequest");
  const accessLogRuns = results.get(OURS_WITH_ACCESS_LOG);
  const accessLogCost = perRound(accessLogRuns, ours, "cpuPerRequest");
  const baseline = results.get(BASELINE);
  const againstBaseline = baseline
    ? [`Against the --baseline binary, per round: CPU per request ${ratioList(perRound(ours, baseline, "cpuPerRequest"))}; requests/s ${ratioList(perRound(ours, baseline, "rps"))}.`]
    : [];
  return [
    table(["target", "requests/s", "p50 ms", "p99 ms", "CPU µs/request (of the serving process)", "RssAnon after the run, MB", "errors"], rows),
    "",
    "readiness-proxy relative to each peer (CPU: lower is better; throughput: higher is better):",
    "",
    table(["peer", "CPU per request", "throughput"], relative),
    "",
    `Against nginx, per round: CPU per request ${ratioList(cpuVsNginx)} (target ≤ 1.50x, stretch ≤ 1.20x); requests/s ${ratioList(rpsVsNginx)} (target ≥ 1.00x).`,
    `RssAnon after each run: ${spread(ours.map((run) => run.rssMb), 1)} MB (target ≤ 25 MB).`,
    ...againstBaseline,
    "",
    `Metrics cost: CPU per request with \`--metrics-listen\` / without, per round: ${ratioList(metricsCost)} (target ≤ 1.10x).`,
    `Limiter cost: CPU per request with \`--max-concurrency 1000\` (never reached at 50 connections; the queue stays empty) / without, per round: ${ratioList(limiterCost)} (target ≤ 1.05x).`,
    `Access log cost: CPU per request with \`--access-log\` (at info, lines into a FIFO this process drains) / without, per round: ${ratioList(accessLogCost)} (target ≤ 1.15x); about ${median(accessLogRuns.map((run) => run.loggedPerRequest)).toFixed(0)} bytes of stdout per request read by each run's end.`,
  ].join("\n");
}
