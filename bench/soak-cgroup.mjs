// make soak-cgroup: the binary in a 64 MiB memory cgroup under 200 small-GET, 50 download and 20 upload clients at once; passes if it lives, unkilled, with 0 errors.
// Usage: node bench/soak-cgroup.mjs [--seconds 60] [--memory-limit 64M]
import { spawnSync } from "node:child_process";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createMemoryCgroup, findMemoryCgroupParent, parseBytes } from "./lib/cgroup.mjs";
import { rssAnonMb, startListening, stop } from "./lib/processes.mjs";
import { runWrk } from "./lib/wrk.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const option = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1] : fallback;
};
const seconds = Number(option("seconds", "60"));
let limitBytes;
try {
  limitBytes = parseBytes(option("memory-limit", "64M"));
} catch (error) {
  console.error(error.message);
  process.exit(2);
}
const PORTS = { proxy: 19080, upstream: 19081 };
const SAMPLE_MS = 1_000;
const MB = 2 ** 20;
// The three loads run at once, each for the whole time: the proxy's worst case is all of them together.
const LOADS = [
  { name: "small GETs", path: "/small", connections: 200 },
  { name: "1 MiB downloads", path: "/big", connections: 50 },
  { name: "1 MiB uploads", path: "/upload", connections: 20, upload: true },
];

const place = findMemoryCgroupParent();
if (place.reason) {
  console.log(`soak-cgroup skipped: ${place.reason}`);
  process.exit(0);
}
if (!existsSync(join(here, "../dist/readiness-proxy"))) {
  console.error("soak-cgroup needs the binary: make build");
  process.exit(2);
}
if (spawnSync("wrk", ["-v"]).error) {
  console.error("soak-cgroup needs wrk (apt-get install wrk)");
  process.exit(2);
}

const cgroup = createMemoryCgroup(place, `rp-soak-${process.pid}`, limitBytes);
console.error(`soak-cgroup: cgroup v${cgroup.version} ${cgroup.path}, limit ${(limitBytes / MB).toFixed(0)} MiB${cgroup.notes.map((note) => `; ${note}`).join("")}`);
const script = join(tmpdir(), `rp-soak-cgroup-${process.pid}.lua`);

let failed = false;
const fail = (message) => {
  console.log(`FAIL: ${message}`);
  failed = true;
};
const servers = [];
try {
  writeFileSync(script, `wrk.method = "POST"\nwrk.body = string.rep("u", 1048576)\nwrk.headers["Content-Type"] = "application/octet-stream"\n`);
  // The app runs outside the group: only the proxy's memory is measured and limited.
  servers.push(await startListening([process.execPath, join(here, "targets/soak-upstream.mjs"), String(PORTS.upstream)], PORTS.upstream));
  // The proxy starts inside the group (the shell joins it, then execs the binary under the same
  // pid), so the runtime sizes its heap for the limit and every page it ever touches is charged.
  const proxyArgv = [
    join(here, "../dist/readiness-proxy"), "--listen", `127.0.0.1:${PORTS.proxy}`, "--upstream", `http://127.0.0.1:${PORTS.upstream}`,
    "--readiness-required-listener", String(PORTS.upstream), "--log-level", "warn",
  ];
  const proxy = await startListening(["sh", "-c", 'echo $$ > "$0" && exec "$@"', cgroup.procsFile, ...proxyArgv], PORTS.proxy);
  servers.push(proxy);
  const idleRssMb = rssAnonMb(proxy.pid);
  const samples = [];
  const sample = () => {
    try {
      const rssMb = rssAnonMb(proxy.pid);
      // NaN once it is killed: a zombie's status has no RssAnon line.
      if (Number.isFinite(rssMb)) samples.push({ usage: cgroup.usageBytes(), anon: cgroup.anonBytes(), rssMb });
    } catch {
      // The proxy is gone and reaped: the checks below say so.
    }
  };
  const loadStarted = Date.now();
  let diedAfterS;
  // A dead proxy ends the load at once: the rest would only count refused connections.
  const proxyDied = new AbortController();
  proxy.once("exit", () => {
    diedAfterS = (Date.now() - loadStarted) / 1000;
    proxyDied.abort();
  });
  const sampler = setInterval(sample, SAMPLE_MS);
  console.error(`soak-cgroup: ${seconds} s of ${LOADS.map((load) => `${load.connections} clients of ${load.name}`).join(", ")}; RssAnon idle ${idleRssMb.toFixed(1)} MB`);
  let runs;
  try {
    runs = await Promise.all(
      LOADS.map((load) => runWrk(`http://127.0.0.1:${PORTS.proxy}${load.path}`, { connections: load.connections, seconds, script: load.upload ? script : undefined, signal: proxyDied.signal })),
    );
  } finally {
    clearInterval(sampler);
  }
  sample();
  // Still serving after the load, not merely still a process.
  const answer = await fetch(`http://127.0.0.1:${PORTS.proxy}/small`, { signal: AbortSignal.timeout(5_000) }).then((response) => response.status, (error) => error.message);
  const alive = proxy.exitCode === null && proxy.signalCode === null;
  const oomKills = cgroup.oomKills();
  const peak = cgroup.peakBytes();
  const most = (key) => Math.max(...samples.map((entry) => entry[key]));
  console.log(
    [
      ...LOADS.map((load, index) => `${load.name} (${load.connections} clients): ${runs[index].requests} requests (${runs[index].rps.toFixed(0)}/s), p99 ${runs[index].p99.toFixed(1)} ms, errors ${runs[index].errors}`),
      `proxy: ${alive ? "alive" : `exited (${proxy.signalCode ?? `code ${proxy.exitCode}`}) ${diedAfterS?.toFixed(1)} s into the load`}, GET /small after the load: ${answer}, OOM kills in the group: ${oomKills}`,
      `cgroup memory, limit ${(limitBytes / MB).toFixed(0)} MiB: peak ${(peak / MB).toFixed(1)} MiB (kernel's high-water mark, page cache included), ` +
        `most sampled ${(most("usage") / MB).toFixed(1)} MiB, of it anonymous at most ${(most("anon") / MB).toFixed(1)} MiB (every ${SAMPLE_MS / 1000} s)`,
      `proxy RssAnon: idle ${idleRssMb.toFixed(1)} MB, at most ${most("rssMb").toFixed(1)} MB, ${alive ? "after the load" : "at the last sample"} ${samples.at(-1)?.rssMb.toFixed(1)} MB`,
    ].join("\n"),
  );
  if (!alive) fail("the proxy did not survive the load");
  if (oomKills > 0) fail(`the OOM killer killed ${oomKills} process(es) in the group`);
  if (answer !== 200) fail(`GET /small after the load answered ${answer}`);
  runs.forEach((run, index) => run.errors > 0 && fail(`${run.errors} socket errors or non-2xx answers in ${LOADS[index].name}`));
  if (!failed) console.log("soak-cgroup passed");
} finally {
  await Promise.all(servers.map(stop));
  await cgroup.remove();
  rmSync(script, { force: true });
}
process.exitCode = failed ? 1 : 0;
