// Section 7: the access log's cost alone: the binary with and without --access-log (and a --baseline build both ways) under section 1's load, all at the same time, CPU per request side by side per round.
import { openLogPipe } from "../lib/log-pipe.mjs";
import { cpuMicrosOf, stop } from "../lib/processes.mjs";
import { median, perRound, ratioList, spread, table } from "../lib/stats.mjs";
import { runWrk } from "../lib/wrk.mjs";
import { startUpstreamNginx } from "../targets/nginx.mjs";
import { startReadinessProxy } from "../targets/node-proxies.mjs";

const UPSTREAM_PORT = 19050;

/**
 * Each build runs twice: at warn without the flag (section 1's plain binary), and with
 * `--access-log` at info into a FIFO this process drains (lib/log-pipe.mjs, as in section 1). The
 * --baseline build, when given, runs both ways too, so the old and new log are compared in one run.
 */
function contenders({ binary, baseline }) {
  const builds = [{ label: "this build", binary, port: 19051 }, ...(baseline ? [{ label: "--baseline", binary: baseline, port: 19053 }] : [])];
  return builds.flatMap((build) => [
    { build: build.label, name: `${build.label}, no access log`, binary: build.binary, port: build.port, flags: [], logLevel: "warn" },
    { build: build.label, name: `${build.label}, --access-log to a FIFO`, binary: build.binary, port: build.port + 1, flags: ["--access-log"], logLevel: "info", logged: true },
  ]);
}

export async function accessLogCost({ rounds, seconds, binary, baseline }) {
  const upstream = await startUpstreamNginx(UPSTREAM_PORT);
  const started = [];
  const pipes = [];
  try {
    for (const contender of contenders({ binary, baseline })) {
      const pipe = contender.logged ? openLogPipe() : undefined;
      if (pipe) pipes.push(pipe);
      try {
        const child = await startReadinessProxy({ ...contender, upstreamUrl: `http://127.0.0.1:${UPSTREAM_PORT}`, stdout: pipe?.fd });
        started.push({ ...contender, child, pipe, runs: [] });
      } finally {
        pipe?.closeWriteEnd();
      }
    }
    // The JIT wants a couple of seconds of load before it is measured.
    await Promise.all(started.map((target) => runWrk(`http://127.0.0.1:${target.port}/file`, { seconds: 2, connections: 25 })));
    // All at once, each with its own wrk: on this shared VM, one run after another moved the
    // plain binary's CPU per request by up to 2x between neighbouring runs (whatever else ran in
    // that second), swamping a 10% difference; side by side, every contender gets the same
    // neighbours. 25 connections each, so the cores are not oversubscribed more than section 1's.
    for (let round = 0; round < rounds; round++) {
      const before = started.map((target) => ({ cpu: cpuMicrosOf([target.child.pid]), logged: target.pipe?.bytes() }));
      const runs = await Promise.all(started.map((target) => runWrk(`http://127.0.0.1:${target.port}/file`, { connections: 25, seconds })));
      started.forEach((target, index) => {
        const run = runs[index];
        const cpuPerRequest = (cpuMicrosOf([target.child.pid]) - before[index].cpu) / run.requests;
        const loggedPerRequest = target.pipe ? (target.pipe.bytes() - before[index].logged) / run.requests : undefined;
        target.runs.push({ ...run, cpuPerRequest, loggedPerRequest });
        const logged = loggedPerRequest === undefined ? "" : `, ${loggedPerRequest.toFixed(0)} stdout bytes/req`;
        console.error(`  round ${round + 1} ${target.name}: ${run.rps.toFixed(0)} rps, ${cpuPerRequest.toFixed(1)} µs/req, errors ${run.errors}${logged}`);
      });
    }
  } finally {
    await Promise.all([upstream.child, ...started.map((target) => target.child)].map((child) => stop(child)));
    for (const pipe of pipes) pipe.close();
  }
  const rows = started.map((target) => [
    target.name,
    spread(target.runs.map((run) => run.rps)),
    spread(target.runs.map((run) => run.cpuPerRequest), 1),
    target.logged ? median(target.runs.map((run) => run.loggedPerRequest)).toFixed(0) : "",
    String(target.runs.reduce((sum, run) => sum + run.errors, 0)),
  ]);
  const ratios = [...new Set(started.map((target) => target.build))].map((build) => {
    const [off, on] = started.filter((target) => target.build === build);
    return { build, ratios: perRound(on.runs, off.runs, "cpuPerRequest") };
  });
  const lines = ratios.map(({ build, ratios }) => `Access log cost (${build}): CPU per request with \`--access-log\` / without, per round: ${ratioList(ratios)} (target ≤ 1.10x).`);
  // With a --baseline, the same rounds also compare the two builds' HTTP/1.1 relay, each way:
  // side by side, so the neighbours each round had are the same for both.
  if (baseline) {
    for (const [index, way] of ["no access log", "--access-log"].entries()) {
      const current = started.filter((target) => target.build === "this build")[index];
      const old = started.filter((target) => target.build === "--baseline")[index];
      lines.push(`This build / --baseline, ${way}: CPU per request, per round: ${ratioList(perRound(current.runs, old.runs, "cpuPerRequest"))}.`);
    }
  }
  return {
    markdown: [table(["target", "requests/s", "CPU µs/request", "stdout bytes/request", "errors"], rows), "", ...lines].join("\n"),
    ratio: median(ratios[0].ratios),
  };
}
