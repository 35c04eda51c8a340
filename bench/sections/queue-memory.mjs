// Section 6 (issue 27): what a waiting client costs and whether memory comes back after a burst: --max-concurrency 4 --max-queue 10000 before a slow app, N clients queued (or idle), then gone, then no traffic for 30 s.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { openBurst, openFiles, startSlowApp, waitUntilQuiet, warmUp } from "../lib/burst-clients.mjs";
import { memorySplit } from "../lib/memory-split.mjs";
import { rssAnonMb, startListening, stop } from "../lib/processes.mjs";
import { startInstrumentedBundle } from "../lib/runtime-stats.mjs";
import { median, spread, table } from "../lib/stats.mjs";

/** The issue's burst. */
export const CLIENTS = 5_000;
const PORTS = { proxy: 19050, app: 19051 };
/** Seconds after the clients left at which RssAnon is read (those within --after-seconds). */
const AFTER_SECONDS = [1, 5, 10, 20, 30];
/** From the first connection until all are open and read; the queue timeout (60 s) is not reached either. */
const BURST_DEADLINE_MS = 60_000;
/** Between the warm-up and the warm reading: the last requests' garbage is the same for every target. */
const SETTLE_MS = 2_000;
// File descriptors besides the clients', for this process and for the proxy.
const SPARE_FDS = 100;
/** Upstream connections the warm-up may leave in the proxy's pool (4 slots, a few spare). */
const POOLED_FDS = 8;
/** How often RssAnon is read while the clients arrive and wait, for the peak. */
const PEAK_SAMPLE_MS = 100;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const MB = 2 ** 20;

/** The soft limit on open files of this process (Node raises it to the hard limit at start, the binary too). */
function openFilesLimit() {
  const line = readFileSync("/proc/self/limits", "utf8").split("\n").find((entry) => entry.startsWith("Max open files"));
  const soft = line?.split(/\s{2,}/)[1];
  return soft === "unlimited" ? Infinity : Number(soft);
}

const proxyArgs = () => [
  "--listen", `127.0.0.1:${PORTS.proxy}`, "--upstream", `http://127.0.0.1:${PORTS.app}`, "--log-level", "warn",
  "--max-concurrency", "4", "--max-queue", "10000", "--queue-timeout", "60s",
];

/**
 * One proxy's life: started, warmed up (2,000 GETs the app answers at once), RssAnon read
 * (warm); `clients` connections opened, each sending a GET the app holds (queued: 4 reach the
 * app, the rest wait in the queue) or nothing (idle keep-alive clients); the peak read while
 * they arrive and until the proxy has read them all; then every client closes, and RssAnon is
 * read at AFTER_SECONDS with no traffic at all. `read` (an instrumented bundle) adds what the
 * runtime reports, at warm, at the peak and at the end.
 */
async function burst({ start, mode, clients, afterSeconds, app }) {
  const proxy = await start();
  const pid = proxy.child.pid;
  try {
    await warmUp(PORTS.proxy);
    await sleep(SETTLE_MS);
    const warm = memorySplit(pid);
    const warmReport = await proxy.read?.();
    const files = openFiles(pid);
    let peakMb = warm.rssAnonMb;
    const sampler = setInterval(() => (peakMb = Math.max(peakMb, rssAnonMb(pid))), PEAK_SAMPLE_MS);
    const deadline = performance.now() + BURST_DEADLINE_MS;
    let opened;
    let quiet;
    let settled;
    try {
      opened = await openBurst(PORTS.proxy, { count: clients, send: mode === "queued", deadline });
      // Less a few: the pool's idle connections to the app from the warm-up may close meanwhile.
      quiet = await waitUntilQuiet(pid, { files: files - POOLED_FDS + opened.sockets.length, deadline });
      settled = memorySplit(pid);
    } finally {
      clearInterval(sampler);
    }
    peakMb = Math.max(peakMb, settled.rssAnonMb);
    const peakReport = await proxy.read?.();
    const checks = { open: opened.sockets.length, errors: opened.errors, answered: opened.answered(), held: app.held(), quiet };
    for (const socket of opened.sockets) socket.destroy();
    const left = performance.now();
    const after = [];
    for (const at of AFTER_SECONDS.filter((seconds) => seconds <= afterSeconds)) {
      await sleep(left + at * 1000 - performance.now());
      after.push({ at, ...memorySplit(pid) });
    }
    const afterReport = await proxy.read?.();
    // GCs between the peak's reading and the last one: the collection after the burst, if any, is among them.
    const afterGc = afterReport && { count: afterReport.gcEvents.length, ms: afterReport.gcEvents.reduce((sum, [, durationMs]) => sum + durationMs, 0), longestMs: Math.max(0, ...afterReport.gcEvents.map(([, durationMs]) => durationMs)) };
    return { warm, settled, peakMb, after, checks, afterGc, reports: proxy.read && { warm: warmReport.memory, peak: peakReport.memory, after: afterReport.memory } };
  } finally {
    await stop(proxy.child);
    app.reset();
  }
}

/** The binaries measured (this checkout's, and --baseline's), and the bundle beside each, run with the stats preload. */
function targets({ binary, baseline, runtime, root, here }) {
  const binaries = [{ name: "readiness-proxy", binary }, ...(baseline ? [{ name: "--baseline", binary: baseline }] : [])];
  const list = binaries.map(({ name, binary: path }) => ({ name: `${name} (binary)`, start: async () => ({ child: await startListening([path, ...proxyArgs()], PORTS.proxy) }) }));
  const instrumented = binaries
    .map(({ name, binary: path }) => ({ name, bundle: join(dirname(path), "readiness-proxy.cjs") }))
    .filter(({ bundle }) => existsSync(bundle) && existsSync(runtime))
    .map(({ name, bundle }) => ({ name: `${name} (bundle + stats preload)`, start: () => startInstrumentedBundle({ runtime, root, here, port: PORTS.proxy, args: proxyArgs(), bundle }) }));
  return { list, instrumented };
}

export async function queueMemory({ binary, baseline, runtime, root, here, clients = CLIENTS, rounds = 1, afterSeconds = 30 }) {
  const limit = openFilesLimit();
  if (limit < clients + SPARE_FDS) {
    return { markdown: `Not measured: ${clients} connections need at least ${clients + SPARE_FDS} open files in this process and in the proxy, the limit here is ${limit} (raise it with \`ulimit -n ${clients + SPARE_FDS}\`).` };
  }
  const { list, instrumented } = targets({ binary, baseline, runtime, root, here });
  const app = await startSlowApp(PORTS.app);
  const results = new Map(); // `${target} ${mode}` -> runs
  const record = (target, mode, run) => {
    const key = `${target.name}\t${mode}`;
    results.set(key, [...(results.get(key) ?? []), run]);
    const after = run.after.at(-1);
    console.error(`  ${target.name}, ${clients} ${mode}: warm ${run.warm.rssAnonMb.toFixed(1)}, peak ${run.peakMb.toFixed(1)} MB (${perConnection(run, clients)} B each), ${after ? `after ${after.at} s ${after.rssAnonMb.toFixed(1)} MB` : ""}; ${JSON.stringify(run.checks)}`);
  };
  try {
    for (let round = 0; round < rounds; round++) {
      for (const mode of ["queued", "idle"]) for (const target of list) record(target, mode, await burst({ start: target.start, mode, clients, afterSeconds, app }));
      for (const target of instrumented) record(target, "queued", await burst({ start: target.start, mode: "queued", clients, afterSeconds, app }));
    }
  } finally {
    await app.close();
  }
  return { markdown: render(results, clients, rounds), results };
}

const perConnection = (run, clients) => (((run.peakMb - run.warm.rssAnonMb) * MB) / clients).toFixed(0);

function render(results, clients, rounds) {
  const value = (runs, pick, digits = 1) => (rounds > 1 ? spread(runs.map(pick), digits) : pick(runs[0]).toFixed(digits));
  const afterAt = (run, at) => run.after.find((sample) => sample.at === at);
  const ats = AFTER_SECONDS.filter((at) => [...results.values()][0]?.[0].after.some((sample) => sample.at === at));
  const rows = [...results].map(([key, runs]) => {
    const [name, mode] = key.split("\t");
    const last = ats.at(-1);
    return [
      name, mode,
      value(runs, (run) => run.warm.rssAnonMb), value(runs, (run) => run.peakMb),
      value(runs, (run) => ((run.peakMb - run.warm.rssAnonMb) * MB) / clients, 0),
      ...ats.map((at) => value(runs, (run) => afterAt(run, at).rssAnonMb)),
      last === undefined ? "-" : `${value(runs, (run) => afterAt(run, last).rssAnonMb / run.warm.rssAnonMb, 2)}x`,
    ];
  });
  const split = [...results].filter(([key]) => key.endsWith("\tqueued")).map(([key, runs]) => {
    const cell = (pick) => `${median(runs.map((run) => pick(run).mallocMb)).toFixed(1)} / ${median(runs.map((run) => pick(run).mmapMb)).toFixed(1)}`;
    return [key.split("\t")[0], cell((run) => run.warm), cell((run) => run.settled), cell((run) => run.after.at(-1) ?? run.settled)];
  });
  const reported = [...results].filter(([, runs]) => runs[0].reports).map(([key, runs]) => {
    const cell = (stage) => {
      const pick = (field) => median(runs.map((run) => run.reports[stage][field])) / MB;
      return `${pick("heapCommitted").toFixed(1)} / ${pick("heapUsed").toFixed(1)} / ${pick("external").toFixed(1)} / ${pick("v8Malloced").toFixed(1)}`;
    };
    const gc = (pick) => median(runs.map((run) => pick(run.afterGc)));
    return [key.split("\t")[0], cell("warm"), cell("peak"), cell("after"), `${gc((entry) => entry.count)} GCs, ${gc((entry) => entry.ms).toFixed(1)} ms (longest ${gc((entry) => entry.longestMs).toFixed(1)})`];
  });
  const checks = [...results].flatMap(([key, runs]) => runs.map((run) => ({ key, ...run.checks })));
  const wrong = checks.filter(({ key, open, errors, answered, held, quiet }) => open !== clients || errors > 0 || answered > 0 || !quiet || (key.endsWith("queued") ? held !== 4 : held !== 0));
  const lastAt = ats.at(-1) ?? 0;
  return [
    `RssAnon in MB. Per connection: (peak - warm) / ${clients.toLocaleString("en")}, bytes. After: seconds since every client closed, with no traffic since. ${rounds > 1 ? `Medians (min-max) of ${rounds} rounds, the targets alternated.` : "One round."}`,
    "",
    table(["target", "clients", "warm", "peak", "per connection, B", ...ats.map((at) => `after ${at} s`), `after ${lastAt} s / warm`], rows),
    "",
    `Where RssAnon is (/proc/<pid>/smaps), queued runs, MB: glibc's main malloc arena (\`[heap]\`) / anonymous mappings (V8's heap pages, other threads' arenas).`,
    "",
    table(["target", "warm", "peak (all read)", `after ${lastAt} s`], split),
    ...(reported.length
      ? [
          "",
          "What the runtime reports (the preload, SIGUSR2; no GC forced), queued runs, MB: V8 heap committed / used / external / V8's own malloc; and the GC pauses (a PerformanceObserver's) from the peak's reading to the last.",
          "",
          table(["target", "warm", "peak (all read)", `after ${lastAt} s`, "GC after the peak"], reported),
        ]
      : []),
    ...(wrong.length ? ["", `Runs off the scenario (connections open, failed, answered early, held by the app, quiet): ${wrong.map((check) => JSON.stringify(check)).join("; ")}.`] : []),
  ].join("\n");
}
