// /readyz at scale: in a network namespace of its own, the cache-miss /readyz latency and the CPU per scan (user, system, main thread) with 0 and N held loopback connections.
// Usage: node bench/readyz-scale.mjs [--binary PATH] [--baseline PATH] [--connections 36000] [--probes 150] [--kind tcp|udp|unix] [--sockets 10000]
// Re-runs itself under `unshare -rn` (a user and network namespace: no root needed, nothing outside is touched).
import { spawn, spawnSync } from "node:child_process";
import { readdirSync, readFileSync, mkdtempSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const here = fileURLToPath(new URL(".", import.meta.url));
const { values: options } = parseArgs({
  options: {
    binary: { type: "string", default: join(here, "../dist/readiness-proxy") },
    baseline: { type: "string" },
    connections: { type: "string", default: "36000" },
    sockets: { type: "string", default: "10000" },
    probes: { type: "string", default: "150" },
    kind: { type: "string", default: "tcp" },
    inner: { type: "boolean", default: false },
  },
});

if (!options.inner) {
  const result = spawnSync("unshare", ["-rn", process.execPath, fileURLToPath(import.meta.url), ...process.argv.slice(2), "--inner"], { stdio: "inherit" });
  process.exit(result.status ?? 1);
}

const HOLDERS = 8;
const HOLDER_BASE_PORT = 21000;
const REQUIRED_PORT = 20999;
const PROXY_PORT = 18080;
const PROBE_GAP_MS = 25;
const work = mkdtempSync(join(tmpdir(), "rp-readyz-scale-"));

spawnSync("ip", ["link", "set", "lo", "up"], { stdio: "inherit" });

/** A child that holds `count` sockets of `kind` (tcp: its own listener and the connections to it) until stdin closes. */
function startHolder(kind, index, count) {
  const code = `
    const net = require("node:net"), dgram = require("node:dgram");
    const [kind, index, count, dir] = process.argv.slice(1); const n = Number(count); const held = [];
    const done = () => process.stdout.write("ready\\n");
    process.stdin.on("end", () => process.exit(0)); process.stdin.resume();
    if (kind === "tcp") {
      const port = ${HOLDER_BASE_PORT} + Number(index);
      const server = net.createServer((socket) => held.push(socket));
      server.listen(port, "127.0.0.1", () => {
        let opened = 0, started = 0;
        const next = () => { if (started >= n) return; started++;
          const socket = net.createConnection(port, "127.0.0.1", () => { held.push(socket); if (++opened === n) done(); else next(); }); };
        if (n === 0) done(); else for (let k = 0; k < Math.min(64, n); k++) next();
      });
    } else if (kind === "udp") {
      let bound = 0; if (n === 0) done();
      for (let k = 0; k < n; k++) { const s = dgram.createSocket("udp4"); held.push(s); s.bind(0, "127.0.0.1", () => { if (++bound === n) done(); }); }
    } else {
      let bound = 0; if (n === 0) done();
      for (let k = 0; k < n; k++) { const s = net.createServer(); held.push(s); s.listen(dir + "/h" + index + "-" + k + ".sock", () => { if (++bound === n) done(); }); }
    }`;
  const child = spawn(process.execPath, ["-e", code, kind, String(index), String(count), work], { stdio: ["pipe", "pipe", "inherit"] });
  return new Promise((resolve) => child.stdout.once("data", () => resolve(child)));
}

/** Nanoseconds on CPU of every thread of `pid`, and of its main thread, from schedstat; user and system ticks from stat. */
function cpuOf(pid) {
  let allNs = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      allNs += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    } catch {}
  }
  const mainNs = Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").split(" ")[0]);
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { allNs, mainNs, userTicks: Number(fields[11]), systemTicks: Number(fields[12]) };
}

function get(path) {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port: PROXY_PORT, path, agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode, ms: performance.now() - started }));
    });
    req.on("error", reject);
    req.end();
  });
}

function requiredSpec(kind) {
  if (kind === "udp") return `udp:${REQUIRED_PORT}`;
  if (kind === "unix") return `unix:${join(work, "required.sock")}`;
  return String(REQUIRED_PORT);
}

/** Starts `binary`, probes /readyz `probes` times at a cache miss (TTL 1ms, 25 ms apart), and returns the figures. */
async function measure(binary, kind, probes) {
  const proxy = spawn(binary, ["--listen", `127.0.0.1:${PROXY_PORT}`, "--upstream", "http://127.0.0.1:9", "--readiness-required-listener", requiredSpec(kind), "--readiness-cache-ttl", "1ms", "--log-level", "warn"], { stdio: ["ignore", "ignore", "inherit"] });
  for (;;) {
    try {
      if ((await get("/healthz")).status === 200) break;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  for (let warm = 0; warm < 10; warm++) await get("/readyz");
  const latencies = [];
  const before = cpuOf(proxy.pid);
  let notReady = 0;
  for (let probe = 0; probe < probes; probe++) {
    await new Promise((resolve) => setTimeout(resolve, PROBE_GAP_MS));
    const { status, ms } = await get("/readyz");
    if (status !== 200) notReady++;
    latencies.push(ms);
  }
  const after = cpuOf(proxy.pid);
  proxy.kill("SIGKILL");
  await new Promise((resolve) => proxy.once("exit", resolve));
  latencies.sort((a, b) => a - b);
  const tickMs = 10;
  return {
    p50: latencies[Math.floor(probes / 2)],
    p90: latencies[Math.floor(probes * 0.9)],
    max: latencies[probes - 1],
    cpuMs: (after.allNs - before.allNs) / 1e6 / probes,
    userMs: ((after.userTicks - before.userTicks) * tickMs) / probes,
    systemMs: ((after.systemTicks - before.systemTicks) * tickMs) / probes,
    mainMs: (after.mainNs - before.mainNs) / 1e6 / probes,
    notReady,
  };
}

const kind = options.kind;
const probes = Number(options.probes);
const scale = kind === "tcp" ? Number(options.connections) : Number(options.sockets);
const binaries = [["this build", options.binary], ...(options.baseline ? [["baseline", options.baseline]] : [])];
// The required socket itself, so that every probe passes.
const required = spawn(process.execPath, ["-e", kind === "udp"
  ? `require("node:dgram").createSocket("udp4").bind(${REQUIRED_PORT}, "127.0.0.1", () => console.log("ready")); process.stdin.resume(); process.stdin.on("end", () => process.exit(0));`
  : `require("node:net").createServer().listen(${kind === "unix" ? JSON.stringify(join(work, "required.sock")) : `${REQUIRED_PORT}, "127.0.0.1"`}, () => console.log("ready")); process.stdin.resume(); process.stdin.on("end", () => process.exit(0));`],
  { stdio: ["pipe", "pipe", "inherit"] });
await new Promise((resolve) => required.stdout.once("data", resolve));

const rows = [];
for (const count of [0, scale]) {
  const holders = await Promise.all(Array.from({ length: HOLDERS }, (_, index) => startHolder(kind, index, Math.floor(count / HOLDERS))));
  const tableRows = kind === "tcp" ? readFileSync("/proc/net/tcp", "latin1").split("\n").length - 2 : kind === "udp" ? readFileSync("/proc/net/udp", "latin1").split("\n").length - 2 : readFileSync("/proc/net/unix", "latin1").split("\n").length - 2;
  // Rotated: A B A B, so that drift on a shared machine touches both builds alike.
  for (let round = 0; round < 2; round++) {
    for (const [name, binary] of binaries) rows.push({ name, count, tableRows, round, ...(await measure(binary, kind, probes)) });
  }
  for (const holder of holders) holder.stdin.end();
  await Promise.all(holders.map((holder) => new Promise((resolve) => holder.once("exit", resolve))));
}
required.stdin.end();

const f = (value) => value.toFixed(2);
console.log(`\n/readyz at a cache miss, ${kind}, ${probes} probes ${PROBE_GAP_MS} ms apart per row (CPU per probe: the scan plus one HTTP exchange)\n`);
console.log(`| build | ${kind === "tcp" ? "connections" : "sockets"} | ${kind} rows | p50 ms | p90 ms | max ms | CPU ms/scan (all threads) | user ms | system ms | main thread ms | not ready |`);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
for (const row of rows) console.log(`| ${row.name} | ${row.count} | ${row.tableRows} | ${f(row.p50)} | ${f(row.p90)} | ${f(row.max)} | ${f(row.cpuMs)} | ${f(row.userMs)} | ${f(row.systemMs)} | ${f(row.mainMs)} | ${row.notReady} |`);
