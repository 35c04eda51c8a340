// Issue 28's tail evidence at one connection: added latency over direct for nginx and readiness-proxy, slow requests lined up with the daemon's GCs, its event-loop delay, and system calls and context switches per request.
// Usage: node bench/tails.mjs [--rounds 3] [--seconds 6] [--requests 3000] [--binary PATH] [--variant 'label=--v8-flag,...']... [--variant-bundle 'label=/path/readiness-proxy.cjs']...
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { interleavedLatency, quantile } from "./lib/latency-client.mjs";
import { childPids, schedulerTotals, stop } from "./lib/processes.mjs";
import { startInstrumentedBundle } from "./lib/runtime-stats.mjs";
import { median, spread, table } from "./lib/stats.mjs";
import { havePerf, haveStrace, perfCounts, straceCounts } from "./lib/syscall-count.mjs";
import { startProxyNginx, startUpstreamNginx } from "./targets/nginx.mjs";
import { startReadinessProxy } from "./targets/node-proxies.mjs";
import { option } from "./lib/options.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");
const args = process.argv.slice(2);
const options = (name) => args.flatMap((arg, at) => (arg === `--${name}` ? [args[at + 1]] : []));
const rounds = Number(option("rounds", "3"));
const seconds = Number(option("seconds", "6"));
const requests = Number(option("requests", "3000"));
const binary = option("binary", join(root, "dist/readiness-proxy"));
const runtime = join(root, `node_modules/node-linux-${process.arch}/bin/node`);
if (!existsSync(binary)) {
  console.error(`no binary at ${binary}: make build`);
  process.exit(2);
}
// A GC that ends within this much of a request's start or starts within this much of its end counts as overlapping: the two processes' clocks agree to about this.
const SLACK_MS = 0.05;
const PORT = { direct: 19180, nginx: 19181, ours: 19182, bundle: 19183, delay: 19184 };

const upstream = await startUpstreamNginx(PORT.direct);
const upstreamArgs = (port) => ["--listen", `127.0.0.1:${port}`, "--upstream", `http://127.0.0.1:${PORT.direct}`, "--log-level", "warn"];
const targets = [{ key: "direct", name: "direct (nginx upstream)", port: PORT.direct, child: upstream.child, pids: upstream.pids }];
const stopAll = () => Promise.all(targets.map((target) => stop(target.child)));
try {
  const nginx = await startProxyNginx(PORT.nginx, PORT.direct);
  targets.push({ key: "nginx", name: "nginx proxy (1 worker, keep-alive)", port: PORT.nginx, child: nginx.child, pids: nginx.pids });
  const ours = await startReadinessProxy({ binary, port: PORT.ours, upstreamUrl: `http://127.0.0.1:${PORT.direct}` });
  targets.push({ key: "ours", name: "readiness-proxy (binary)", port: PORT.ours, child: ours, pids: () => [ours.pid] });
  const instrumented = async (key, name, port, extra) => {
    const started = await startInstrumentedBundle({ runtime, root, here, port, args: upstreamArgs(port), ...extra });
    targets.push({ key, name, port, child: started.child, pids: () => [started.child.pid], read: started.read, gc: !extra.eventLoopDelay, delay: extra.eventLoopDelay });
  };
  await instrumented("bundle", "readiness-proxy (bundle + stats preload: GCs lined up)", PORT.bundle, {});
  await instrumented("delay", "readiness-proxy (bundle + event-loop delay histogram, 1 ms timer)", PORT.delay, { eventLoopDelay: true });
  let port = 19185;
  for (const variant of options("variant")) {
    const [label, flags] = [variant.slice(0, variant.indexOf("=")), variant.slice(variant.indexOf("=") + 1)];
    await instrumented(`v${port}`, `readiness-proxy (bundle, ${label}: ${flags.split(",").join(" ")})`, port, { extraFlags: flags.split(",") });
    port++;
  }
  for (const variant of options("variant-bundle")) {
    const [label, bundle] = [variant.slice(0, variant.indexOf("=")), variant.slice(variant.indexOf("=") + 1)];
    await instrumented(`v${port}`, `readiness-proxy (bundle ${label})`, port, { bundle });
    port++;
  }

  // Warm-up: the JIT, and every connection open.
  await interleavedLatency(targets, { path: "/file", seconds: 3 });
  const latency = new Map(targets.map((target) => [target.name, []]));
  for (let round = 0; round < rounds; round++) {
    const before = new Map();
    for (const target of targets) if (target.read) before.set(target.name, await target.read());
    const scheduledBefore = new Map(targets.map((target) => [target.name, schedulerTotals(target.pids())]));
    const samples = await interleavedLatency(targets, { path: "/file", seconds, stamps: true });
    const scheduledAfter = new Map(targets.map((target) => [target.name, schedulerTotals(target.pids())]));
    const direct = samples.get(targets[0].name).ms;
    for (const target of targets) {
      const { ms, sentAt } = samples.get(target.name);
      const run = { requests: ms.length, p50: quantile(ms, 0.5), p99: quantile(ms, 0.99), addedP50: quantile(ms, 0.5) - quantile(direct, 0.5), addedP99: quantile(ms, 0.99) - quantile(direct, 0.99) };
      const [was, is] = [scheduledBefore.get(target.name), scheduledAfter.get(target.name)];
      // The upstream serves every target's requests, not direct's alone.
      const served = target.key === "direct" ? ms.length * targets.length : ms.length;
      run.onCpuUs = (is.runNs - was.runNs) / 1000 / served;
      run.runQueueUs = (is.waitNs - was.waitNs) / 1000 / served;
      run.preemptionsPerThousand = ((is.involuntary - was.involuntary) * 1000) / served;
      if (target.read) {
        const snapshot = await target.read();
        const previous = before.get(target.name);
        run.bytesPerRequest = (snapshot.allocatedBytes - previous.allocatedBytes) / ms.length;
        if (target.gc) Object.assign(run, correlate(ms, sentAt, snapshot.gcEvents, quantile(direct, 0.99)));
        if (target.delay) run.delay = snapshot.eventLoopDelay;
      }
      latency.get(target.name).push(run);
    }
    console.error(`  round ${round + 1}: ${targets.map((target) => `${target.key} p50/p99 ${(latency.get(target.name)[round].p50 * 1000).toFixed(0)}/${(latency.get(target.name)[round].p99 * 1000).toFixed(0)} µs`).join(", ")}`);
  }

  // One target at a time, bounded by count: what it does per request, counted by strace and perf.
  const counted = [];
  for (const key of ["nginx", "ours"]) {
    const target = targets.find((candidate) => candidate.key === key);
    // nginx's worker does the proxying; the master only waits.
    const pids = key === "nginx" ? childPids(target.child.pid) : target.pids();
    const load = () => interleavedLatency([target], { path: "/file", seconds: 30, maxPerTarget: requests }).then((samples) => samples.get(target.name).ms.length);
    const row = { name: target.name };
    if (haveStrace()) {
      const { calls, result } = await straceCounts(pids, load);
      row.syscalls = new Map([...calls].map(([name, { calls: count, errors }]) => [name, { perRequest: count / result, errorsPerRequest: errors / result }]));
    }
    if (havePerf()) {
      const { counts, result } = await perfCounts(pids, load);
      row.contextSwitches = counts.get("context-switches") / result;
      row.migrations = counts.get("cpu-migrations") / result;
      row.taskClockUs = (counts.get("task-clock") * 1000) / result; // perf's task-clock is in ms
    }
    counted.push(row);
  }

  const markdown = render(targets, latency, counted);
  mkdirSync(join(here, "results"), { recursive: true });
  writeFileSync(join(here, "results/tails.md"), markdown);
  console.log(markdown);
} finally {
  await stopAll();
}

/** Lines the requests up with the GCs that ran while they were in flight. */
function correlate(ms, sentAt, gcEvents, directP99) {
  const events = gcEvents.map(([start, duration]) => [start, start + duration]).sort((a, b) => a[0] - b[0]);
  const overlaps = ms.map((took, index) => {
    const start = sentAt[index] - SLACK_MS;
    const end = sentAt[index] + took + SLACK_MS;
    return events.some(([gcStart, gcEnd]) => gcStart < end && gcEnd > start);
  });
  const p99 = quantile(ms, 0.99);
  const slow = ms.flatMap((took, index) => (took >= p99 ? [overlaps[index]] : []));
  const clean = ms.filter((_took, index) => !overlaps[index]);
  const hit = ms.filter((_took, index) => overlaps[index]);
  return {
    gcs: events.length,
    gcMedianUs: events.length ? median(events.map(([start, end]) => (end - start) * 1000)) : 0,
    overlapShare: hit.length / ms.length,
    slowOverlapShare: slow.filter(Boolean).length / slow.length,
    hitP50: hit.length ? quantile(hit, 0.5) : NaN,
    cleanP99: quantile(clean, 0.99),
    cleanAddedP99: quantile(clean, 0.99) - directP99,
  };
}

function render(targets, latency, counted) {
  const us = (runs, key, digits = 0) => spread(runs.map((run) => run[key] * 1000), digits);
  const rows = targets.map((target) => {
    const runs = latency.get(target.name);
    const isDirect = target.key === "direct";
    return [target.name, spread(runs.map((run) => run.requests)), us(runs, "p50"), us(runs, "p99"), isDirect ? "-" : us(runs, "addedP50"), isDirect ? "-" : us(runs, "addedP99"), runs[0].bytesPerRequest === undefined ? "-" : spread(runs.map((run) => run.bytesPerRequest))];
  });
  const schedulerRows = targets.map((target) => {
    const runs = latency.get(target.name);
    return [target.key === "direct" ? `${target.name}: per request it served, every target's` : target.name, spread(runs.map((run) => run.onCpuUs), 1), spread(runs.map((run) => run.runQueueUs), 1), spread(runs.map((run) => run.preemptionsPerThousand), 1)];
  });
  const nginx = latency.get(targets.find((target) => target.key === "nginx").name);
  const ratioRows = targets
    .filter((target) => !["direct", "nginx"].includes(target.key))
    .map((target) => {
      const runs = latency.get(target.name);
      const ratio = (key) => runs.map((run, round) => `${(run[key] / nginx[round][key]).toFixed(2)}x`).join(", ");
      return [target.name, ratio("addedP50"), ratio("addedP99")];
    });
  const gcRows = targets
    .filter((target) => target.gc)
    .map((target) => {
      const runs = latency.get(target.name);
      return [
        target.name,
        spread(runs.map((run) => run.gcs)),
        spread(runs.map((run) => run.gcMedianUs)),
        `${spread(runs.map((run) => run.overlapShare * 100), 2)}%`,
        `${spread(runs.map((run) => run.slowOverlapShare * 100), 0)}%`,
        us(runs, "hitP50"),
        us(runs, "addedP99"),
        us(runs, "cleanAddedP99"),
      ];
    });
  const delayRows = targets
    .filter((target) => target.delay)
    .map((target) => {
      const runs = latency.get(target.name);
      const of = (key) => spread(runs.map((run) => run.delay[key]));
      return [target.name, of("p50Us"), of("p99Us"), of("p999Us"), of("maxUs")];
    });
  const names = [...new Set(counted.flatMap((row) => [...(row.syscalls?.keys() ?? [])]))].filter((name) => counted.some((row) => (row.syscalls?.get(name)?.perRequest ?? 0) >= 0.01));
  const syscallRows = names
    .sort((a, b) => (counted.at(-1).syscalls?.get(b)?.perRequest ?? 0) - (counted.at(-1).syscalls?.get(a)?.perRequest ?? 0))
    .map((name) => [name, ...counted.map((row) => {
      const entry = row.syscalls?.get(name);
      if (!entry) return "0";
      return entry.errorsPerRequest > 0 ? `${entry.perRequest.toFixed(2)} (${entry.errorsPerRequest.toFixed(2)} failed)` : entry.perRequest.toFixed(2);
    })]);
  const total = (row) => [...(row.syscalls?.values() ?? [])].reduce((sum, entry) => sum + entry.perRequest, 0).toFixed(2);
  const perfRows = counted.filter((row) => row.contextSwitches !== undefined).map((row) => [row.name, row.contextSwitches.toFixed(2), row.migrations.toFixed(3), row.taskClockUs.toFixed(1)]);
  return [
    `### Added latency at one connection, ${rounds} rounds of ${seconds} s, interleaved request by request`,
    "",
    table(["target", "requests per round", "p50 µs", "p99 µs", "added p50 µs", "added p99 µs", "V8 heap bytes allocated per request"], rows),
    "",
    table(["target", "added p50 / nginx's, per round", "added p99 / nginx's, per round"], ratioRows),
    "",
    "### What the scheduler saw during those rounds (/proc/<pid>/task/*/schedstat and status, every thread)",
    "",
    table(["target", "on a CPU, µs per request", "runnable but waiting for a CPU, µs per request", "preemptions (involuntary switches) per 1,000 requests"], schedulerRows),
    "",
    "### Slow requests and GCs (the daemon's PerformanceObserver gc entries, lined up with each request's send and end)",
    "",
    table(["target", "GCs per round", "median GC µs", "requests overlapping a GC", "of the requests at or above p99: overlapping a GC", "p50 of the overlapping ones µs", "added p99 µs", "added p99 without the overlapping ones µs"], gcRows),
    "",
    "### Event-loop delay (perf_hooks.monitorEventLoopDelay, 1 ms resolution: how late its timer ran)",
    "",
    table(["target", "p50 µs", "p99 µs", "p99.9 µs", "max µs"], delayRows),
    "",
    `### Per request, one target at a time (${requests} requests at one connection; strace -f -c, perf stat software events)`,
    "",
    syscallRows.length ? table(["system call, per request", ...counted.map((row) => row.name)], [...syscallRows, ["all", ...counted.map(total)]]) : "strace is not installed (apt-get install strace).",
    "",
    perfRows.length ? table(["target", "context switches per request", "CPU migrations per request", "task-clock µs per request (under perf, at one connection)"], perfRows) : "perf is not usable here (apt-get install linux-perf).",
  ].join("\n");
}
