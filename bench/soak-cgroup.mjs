// make soak-cgroup: the binary in a 64 MiB memory cgroup under one set of loads at once (HTTP/1.1 by wrk, h2c by h2load, gRPC by grpc-go); passes if it lives, unkilled, with 0 errors.
// Usage: node bench/soak-cgroup.mjs [--seconds 60] [--memory-limit 64M] [--loads http1,h2c,grpc,stall,octets,pipelined,idle] [--malloc-arena-max 2] [--proxy-log FILE]
// Issue 52's hostile h2 clients: "stall", one that reads nothing on 90 GET /big streams beside an honest client's 1 MiB GETs
// (each must come whole); "octets", 1-octet DATA frames to a proxied path and to the gRPC health Check; "pipelined", HTTP/1.1
// clients that pipeline 64 KiB of tiny GETs after 64 KiB and read no answer.
// Issue 58's "idle": 10,000 idle HTTP/1.1 then 3,000 idle h2c client connections, honest GETs beside them.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, openSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createMemoryCgroup, findMemoryCgroupParent, parseBytes } from "./lib/cgroup.mjs";
import { pipelinedUnread } from "./lib/h1-attackers.mjs";
import { honestVictim, oneOctetFrames, stalledReader } from "./lib/h2-attackers.mjs";
import { honestGets } from "./lib/honest-gets.mjs";
import { runH2load } from "./lib/h2load.mjs";
import { rssAnonMb, startListening, stop } from "./lib/processes.mjs";
import { runWrk } from "./lib/wrk.mjs";
import { buildGrpcBench, missingGrpc, runGrpcClient } from "./targets/grpc-bench.mjs";
import { option } from "./lib/options.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const seconds = Number(option("seconds", "60"));
let limitBytes;
try {
  limitBytes = parseBytes(option("memory-limit", "64M"));
} catch (error) {
  console.error(error.message);
  process.exit(2);
}
// The proxy runs as the image runs it: with glibc's MALLOC_ARENA_MAX=2 (docs/deploy/image/build-image.mjs); 0 leaves glibc's default.
const arenaMax = option("malloc-arena-max", "2");
if (!/^\d+$/.test(arenaMax)) {
  console.error(`--malloc-arena-max: expected a whole number (0: glibc's default), got "${arenaMax}"`);
  process.exit(2);
}
const proxyEnv = { ...process.env };
if (arenaMax === "0") delete proxyEnv.MALLOC_ARENA_MAX;
else proxyEnv.MALLOC_ARENA_MAX = arenaMax;
// The kinds of load; all by default, a subset to see which one the memory goes to.
const KINDS = ["http1", "h2c", "grpc", "stall", "octets", "pipelined", "idle"];
const kinds = option("loads", "http1,h2c,grpc").split(",");
if (kinds.some((kind) => !KINDS.includes(kind))) {
  console.error(`--loads: expected a comma-separated list of ${KINDS.join(", ")}, got "${option("loads")}"`);
  process.exit(2);
}
/**
 * Ports the system has free now, not fixed ones: the proxy listens with SO_REUSEPORT, so a second
 * soak on the same machine with the same port would share its connections with the first.
 */
async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}
const PORTS = { proxy: await freePort(), upstream: await freePort() };
const SAMPLE_MS = 1_000;
const MB = 2 ** 20;
// Every load runs at once, each for the whole time, through the one proxy to the one app: the
// proxy's worst case is all of them together (HTTP/1.1 and h2 state held side by side).
const WRK_LOADS = [
  { name: "small GETs", path: "/small", connections: 200 },
  { name: "1 MiB downloads", path: "/big", connections: 50 },
  { name: "1 MiB uploads", path: "/upload", connections: 20, upload: true },
];
const H2_LOADS = [
  { name: "h2c small GETs", path: "/small", clients: 50, streams: 20 },
  { name: "h2c 1 MiB downloads", path: "/big", clients: 10, streams: 10 },
];
const GRPC_IN_FLIGHT = 100;
// The idle phase: keep-alive clients that send one GET each and then hold their connection, as
// load balancers and pooled clients do; the h2c ones come once the HTTP/1.1 ones are gone.
const IDLE_HTTP1 = 10_000;
const IDLE_H2C = 3_000;

/** Opens `count` idle clients (bench/lib/idle-clients.mjs); resolves with the process, and whether every one was answered. */
async function openIdleClients(count, protocol) {
  const clients = spawn(process.execPath, [join(here, "lib/idle-clients.mjs"), String(PORTS.proxy), String(count), protocol, "/small"], { stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  clients.stderr.on("data", (chunk) => (stderr += chunk));
  const ready = await new Promise((resolve) => {
    clients.stdout.once("data", () => resolve(true));
    clients.once("exit", () => resolve(false));
  });
  return { clients, ready, stderr: () => stderr.trim().split("\n").at(-1) };
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function holdFor(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, Math.max(0, ms));
    signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });
}

/** Closes a set of idle clients and waits until its process (and so every socket) is gone. */
async function closeIdleClients({ clients }) {
  if (clients === undefined || clients.exitCode !== null || clients.signalCode !== null) return;
  const gone = new Promise((resolve) => clients.once("exit", resolve));
  clients.stdin.end();
  await gone;
}

/**
 * The idle phase: the HTTP/1.1 clients for the first half of the time, then, once they are gone,
 * the h2c ones (as nginx's 32 and 31 MiB were measured, each set on its own), with honest
 * clients beside both the whole time (bench/lib/honest-gets.mjs), every answer of theirs a
 * whole 200: a proxy that holds the idle ones but stops serving fails here.
 */
async function runIdle(signal) {
  const started = Date.now();
  const honest = honestGets(PORTS.proxy, untilTheEnd(signal));
  const http1 = await openIdleClients(IDLE_HTTP1, "h1");
  const http1HeldS = (Date.now() - started) / 1000;
  await holdFor(seconds * 500 - (Date.now() - started), signal);
  await closeIdleClients(http1);
  const h2Started = Date.now();
  const h2c = http1.ready && !signal.aborted ? await openIdleClients(IDLE_H2C, "h2") : { ready: false, stderr: () => "not started" };
  const h2HeldS = (Date.now() - h2Started) / 1000;
  await holdFor(seconds * 1000 - (Date.now() - started), signal);
  await closeIdleClients(h2c);
  const gets = await honest;
  const notReady = [!http1.ready && `HTTP/1.1: ${http1.stderr()}`, !h2c.ready && `h2c: ${h2c.stderr()}`].filter(Boolean);
  const opened = notReady.length > 0 ? `not all idle ones answered: ${notReady.join("; ")}` : `all idle ones open and answered, HTTP/1.1 after ${http1HeldS.toFixed(1)} s, h2c after ${h2HeldS.toFixed(1)} s`;
  return { requests: gets.requests, rps: gets.requests / seconds, latency: "", errors: gets.errors + notReady.length, note: [opened, gets.note].filter(Boolean).join("; ") };
}

const place = findMemoryCgroupParent();
if (place.reason) {
  console.log(`soak-cgroup skipped: ${place.reason}`);
  process.exit(0);
}
if (!existsSync(join(here, "../dist/readiness-proxy"))) {
  console.error("soak-cgroup needs the binary: make build");
  process.exit(2);
}
if (kinds.includes("http1") && spawnSync("wrk", ["-v"]).error) {
  console.error("soak-cgroup needs wrk (apt-get install wrk)");
  process.exit(2);
}
// The h2 loads are left out, each with its reason, where their client is missing: the rest still runs.
const skipped = [];
const h2loadMissing = kinds.includes("h2c") && spawnSync("h2load", ["--version"]).error;
if (h2loadMissing) skipped.push(`${H2_LOADS.map((load) => load.name).join(" and ")}: h2load is not installed (apt-get install nghttp2-client)`);
let grpcProgram;
try {
  const missing = kinds.includes("grpc") && missingGrpc();
  if (missing) skipped.push(`gRPC calls: ${missing}`);
  else if (kinds.includes("grpc")) grpcProgram = buildGrpcBench({ root: join(here, ".."), here });
} catch (error) {
  skipped.push(`gRPC calls: ${error.message}`);
}
for (const reason of skipped) console.log(`soak-cgroup skips ${reason}`);

/** Each load as `{ name, shape, run(signal), blindToLostStreams? }`; run resolves to `{ requests, rps, latency, errors, note? }`. */
const loads = [
  ...(kinds.includes("http1") ? WRK_LOADS : []).map((load) => ({
    name: load.name,
    shape: `HTTP/1.1, ${load.connections} clients`,
    run: async (signal) => {
      const result = await runWrk(`http://127.0.0.1:${PORTS.proxy}${load.path}`, { connections: load.connections, seconds, script: load.upload ? script : undefined, signal });
      return { ...result, latency: `p99 ${result.p99.toFixed(1)} ms`, note: result.errorDetail };
    },
  })),
  ...(kinds.includes("h2c") && !h2loadMissing ? H2_LOADS : []).map((load) => ({
    name: load.name,
    shape: `${load.clients} connections x ${load.streams} streams`,
    blindToLostStreams: true,
    run: async () => {
      // Bounded by -D, not by the signal: h2load prints no report when interrupted. In -D mode it
      // counts neither the streams of a connection that breaks nor a refused reconnect, so a
      // dying proxy shows here as fewer requests (said in the report); the checks after the load fail.
      const result = await runH2load(`http://127.0.0.1:${PORTS.proxy}${load.path}`, { clients: load.clients, streams: load.streams, seconds });
      return { ...result, latency: `mean ${result.meanMs.toFixed(1)} ms, max ${result.maxMs.toFixed(1)} ms` };
    },
  })),
  ...(kinds.includes("idle")
    ? [{ name: "idle keep-alive clients", shape: `${IDLE_HTTP1} HTTP/1.1, then ${IDLE_H2C} h2c, one GET each, then held; honest GET /small beside them (HTTP/1.1 kept alive, HTTP/1.1 a new connection each, h2c)`, run: (signal) => runIdle(signal) }]
    : []),
  ...(grpcProgram
    ? [
        {
          name: "gRPC unary calls",
          shape: `grpc-go, ${GRPC_IN_FLIGHT} in flight on one channel`,
          run: async (signal) => {
            const result = await runGrpcClient(grpcProgram, PORTS.proxy, { concurrency: GRPC_IN_FLIGHT, seconds, signal });
            return { requests: result.calls, rps: result.calls / result.seconds, latency: `p99 ${(result.p99_us / 1000).toFixed(1)} ms`, errors: result.errors, note: result.first_error };
          },
        },
      ]
    : []),
];
/** Ends when the soak's time is up or the proxy dies: the attackers have no -D of their own. */
/**
 * `signal`, or the phase's time, whichever comes first. A timer of our own, not AbortSignal.timeout
 * inside AbortSignal.any: both hold their sources weakly, and a loop that only reads `.aborted`
 * (the honest victim's) kept no listener, so the timeout's signal could be collected before it
 * fired: one run's victim went on downloading for minutes after the phase.
 */
const untilTheEnd = (signal) => {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), seconds * 1000);
  signal.addEventListener("abort", () => {
    clearTimeout(timer);
    controller.abort();
  }, { once: true });
  return controller.signal;
};
// The attackers' own streams are expected to be held, reset or cut: only the honest client beside them counts errors.
const attacker = (name, shape, run) => ({ name, shape, run: async (signal) => ({ rps: 0, latency: "", errors: 0, ...(await run(untilTheEnd(signal))) }) });
if (kinds.includes("octets")) {
  loads.push(
    attacker("1-octet DATA to POST /upload", "100 streams x 65,536 frames of 1 octet, connection after connection", (signal) =>
      oneOctetFrames(PORTS.proxy, { path: "/upload", contentType: "application/octet-stream", signal }),
    ),
    attacker("1-octet DATA to gRPC health Check", "100 streams x 65,536 frames of 1 octet, connection after connection", (signal) =>
      oneOctetFrames(PORTS.proxy, { path: "/grpc.health.v1.Health/Check", contentType: "application/grpc", signal }),
    ),
  );
}
if (kinds.includes("pipelined")) {
  loads.push(
    attacker("pipelined GETs never read", "32 HTTP/1.1 connections, 64 KiB of `GET /` per write whenever the socket drains, no answer read", (signal) =>
      pipelinedUnread(PORTS.proxy, signal),
    ),
  );
}
if (kinds.includes("stall")) {
  loads.push(
    attacker("stalled reader", "SETTINGS_INITIAL_WINDOW_SIZE 0, 90 GET /big streams, reads nothing", (signal) => stalledReader(PORTS.proxy, signal)),
    {
      name: "honest 1 MiB GETs beside the stalled reader",
      shape: "one h2c connection, one GET /big at a time, each whole, never 10 s without an octet",
      run: async (signal) => {
        const result = await honestVictim(PORTS.proxy, untilTheEnd(signal), 1024 * 1024);
        return { ...result, rps: result.requests / seconds, latency: `slowest ${result.slowestMs.toFixed(0)} ms` };
      },
    },
  );
}
if (loads.length === 0) {
  console.log("soak-cgroup skipped: none of the loads asked for can run here (see above)");
  process.exit(0);
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
  // The app (HTTP/1.1 and h2c on one port) runs outside the group: only the proxy's memory is
  // measured and limited.
  servers.push(await startListening([process.execPath, join(here, "targets/soak-upstream.mjs"), String(PORTS.upstream)], PORTS.upstream));
  // The proxy starts inside the group (the shell joins it, then execs the binary under the same
  // pid), so every page it ever touches is charged. V8 still sizes its heap for the machine, not
  // for the limit (measured for issue 38: 262 MB of heap limit in 64 MiB; bench/README.md).
  const proxyArgv = [
    join(here, "../dist/readiness-proxy"), "--listen", `127.0.0.1:${PORTS.proxy}`, "--upstream", `http://127.0.0.1:${PORTS.upstream}`,
    "--readiness-required-listener", String(PORTS.upstream), "--log-level", "warn",
  ];
  // --proxy-log FILE keeps the proxy's own lines (warn and above): where a failed request says why.
  const proxyLog = option("proxy-log", "");
  const stdout = proxyLog ? openSync(proxyLog, "w") : "ignore";
  const proxy = await startListening(["sh", "-c", 'echo $$ > "$0" && exec "$@"', cgroup.procsFile, ...proxyArgv], PORTS.proxy, { env: proxyEnv, stdout });
  servers.push(proxy);
  const idleRssMb = rssAnonMb(proxy.pid);
  const samples = [];
  const sample = () => {
    try {
      const rssMb = rssAnonMb(proxy.pid);
      // NaN once it is killed: a zombie's status has no RssAnon line.
      if (Number.isFinite(rssMb)) samples.push({ usage: cgroup.usageBytes(), anon: cgroup.anonBytes(), kernel: cgroup.kernelBytes(), rssMb });
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
  console.error(`soak-cgroup: ${seconds} s of ${loads.map((load) => `${load.name} (${load.shape})`).join(", ")}; MALLOC_ARENA_MAX ${arenaMax === "0" ? "glibc's default" : arenaMax}; RssAnon idle ${idleRssMb.toFixed(1)} MB`);
  let runs;
  try {
    // A client that fails outright (no report) is a failed load, not a crash of the soak.
    runs = await Promise.all(loads.map((load) => load.run(proxyDied.signal).catch((error) => ({ requests: 0, rps: 0, latency: "", errors: NaN, note: error.message }))));
  } finally {
    clearInterval(sampler);
  }
  sample();
  // Still serving after the load, not merely still a process.
  const answer = await fetch(`http://127.0.0.1:${PORTS.proxy}/small`, { signal: AbortSignal.timeout(5_000) }).then((response) => response.status, (error) => error.message);
  // A GET that got no answer: the proxy's sockets with bytes waiting either way say where it
  // stuck (an app's answer unread on a pooled connection was issue 38's paused-pool defect).
  if (answer !== 200) console.log(`proxy's sockets with bytes queued when the GET failed:\n${queuedSockets(proxy.pid)}`);
  const alive = proxy.exitCode === null && proxy.signalCode === null;
  const oomKills = cgroup.oomKills();
  const peak = cgroup.peakBytes();
  const most = (key) => Math.max(...samples.map((entry) => entry[key]));
  console.log(
    [
      ...loads.map((load, index) => {
        const run = runs[index];
        const note = [run.note, !alive && load.blindToLostStreams && "h2load does not count the streams lost when the proxy died"].filter(Boolean).join("; ");
        return `${load.name} (${load.shape}): ${run.requests} requests (${run.rps.toFixed(0)}/s), ${run.latency}, errors ${run.errors}${note ? ` (${note})` : ""}`;
      }),
      `proxy: ${alive ? "alive" : `exited (${proxy.signalCode ?? `code ${proxy.exitCode}`}) ${diedAfterS?.toFixed(1)} s into the load`}, GET /small after the load: ${answer}, OOM kills in the group: ${oomKills}`,
      `cgroup memory, limit ${(limitBytes / MB).toFixed(0)} MiB: peak ${(peak / MB).toFixed(1)} MiB (kernel's high-water mark, page cache included), ` +
        `most sampled ${(most("usage") / MB).toFixed(1)} MiB, of it anonymous at most ${(most("anon") / MB).toFixed(1)} MiB, the kernel's own (sockets, slabs) at most ${(most("kernel") / MB).toFixed(1)} MiB (every ${SAMPLE_MS / 1000} s)`,
      `proxy RssAnon: idle ${idleRssMb.toFixed(1)} MB, at most ${most("rssMb").toFixed(1)} MB, ${alive ? "after the load" : "at the last sample"} ${samples.at(-1)?.rssMb.toFixed(1)} MB`,
    ].join("\n"),
  );
  if (!alive) fail("the proxy did not survive the load");
  if (oomKills > 0) fail(`the OOM killer killed ${oomKills} process(es) in the group`);
  if (answer !== 200) fail(`GET /small after the load answered ${answer}`);
  runs.forEach((run, index) => !(run.errors === 0) && fail(`${Number.isNaN(run.errors) ? "no report" : `${run.errors} failed requests (socket errors, non-2xx, failed calls)`} in ${loads[index].name}`));
  if (!failed) console.log(`soak-cgroup passed${skipped.length ? ` without ${skipped.map((reason) => reason.split(":")[0]).join(", ")} (skipped, see above)` : ""}`);
  else if (skipped.length) console.log(`(skipped: ${skipped.map((reason) => reason.split(":")[0]).join(", ")})`);
} finally {
  await Promise.all(servers.map(stop));
  await cgroup.remove();
  rmSync(script, { force: true });
}
process.exitCode = failed ? 1 : 0;

/** `ss` lines (state, Recv-Q, Send-Q, local, peer) of the process's TCP sockets with bytes queued either way, or why there are none. */
function queuedSockets(pid) {
  const ss = spawnSync("ss", ["-Htnp", "state", "all"], { encoding: "utf8" });
  if (ss.error || ss.status !== 0) return `  (ss: ${ss.error?.message ?? ss.stderr.trim()})`;
  const lines = ss.stdout.split("\n").filter((line) => line.includes(`pid=${pid},`)).map((line) => line.trim().split(/\s+/));
  // A listener's Send-Q is its backlog, not bytes.
  const queued = lines.filter(([state, recvQ, sendQ]) => state !== "LISTEN" && (recvQ !== "0" || sendQ !== "0"));
  return queued.length === 0 ? `  none (of ${lines.length})` : queued.map((fields) => `  ${fields.slice(0, 5).join(" ")}`).join("\n");
}
