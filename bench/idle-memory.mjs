// Memory per idle keep-alive client connection (RssAnon, from /proc), readiness-proxy beside nginx and HAProxy: N clients send one GET each, then hold their connection open.
// Usage: node bench/idle-memory.mjs [--counts 1000,5000,10000|none] [--h2-counts 1000,3000|none] [--binary dist/readiness-proxy] [--targets readiness-proxy,nginx,haproxy]
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { childPids, startListening, stop, waitForPort } from "./lib/processes.mjs";
import { openIdleClients } from "./lib/open-idle-clients.mjs";
import { option } from "./lib/options.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const list = (text) => (text === "none" ? [] : text.split(",").map(Number));
const counts = list(option("counts", "1000,5000,10000"));
const h2Counts = list(option("h2-counts", "1000,3000"));
const binary = resolve(option("binary", join(here, "../dist/readiness-proxy")));
const targets = option("targets", "readiness-proxy,nginx,haproxy").split(",");
const NODE = process.execPath;
const PORTS = { proxy: 19700, h1App: 19701, h2App: 19702 };
/** After the last answer: the proxy's sweep (1 s) parks what the exchanges lent; RssAnon's lowest reading in this window counts. */
const SETTLE_MS = 6_000;
const SAMPLE_MS = 250;
/** From the first client's connect until every one has its answer. */
const OPEN_DEADLINE_MS = 60_000;
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
const rssAnonKib = (pid) => Number(/RssAnon:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
/** The target's processes: itself and its children (nginx's worker). */
const totalKib = (pid) => [pid, ...childPids(pid)].reduce((sum, one) => sum + rssAnonKib(one), 0);

async function lowestOver(pid, ms) {
  let lowest = Infinity;
  for (const stopAt = performance.now() + ms; performance.now() < stopAt; await sleep(SAMPLE_MS)) lowest = Math.min(lowest, totalKib(pid));
  return lowest;
}

const work = mkdtempSync(join(tmpdir(), "idle-memory-"));

function nginxConfig(protocol) {
  const file = join(work, `nginx-${protocol}.conf`);
  writeFileSync(
    file,
    `daemon off; master_process on; worker_processes 1; pid ${work}/nginx.pid; error_log stderr error;
worker_rlimit_nofile 19000;
events { worker_connections 30000; }
http { access_log off; keepalive_timeout 620s; keepalive_requests 100000; client_body_temp_path ${work}; proxy_temp_path ${work};
  upstream app { server 127.0.0.1:${PORTS.h1App}; keepalive 32; }
  server { listen 127.0.0.1:${PORTS.proxy}${protocol === "h2" ? " http2" : ""};
    location / { proxy_pass http://app; proxy_http_version 1.1; proxy_set_header Connection ""; } } }
`,
  );
  return ["nginx", "-c", file, "-p", work];
}

function haproxyConfig(protocol) {
  const file = join(work, `haproxy-${protocol}.cfg`);
  writeFileSync(
    file,
    `global
  fd-hard-limit 20000
  nbthread 1
defaults
  mode http
  timeout connect 5s
  timeout client 620s
  timeout server 620s
  timeout http-keep-alive 620s
frontend in
  bind 127.0.0.1:${PORTS.proxy}${protocol === "h2" ? " proto h2" : ""}
  default_backend app
backend app
  http-reuse always
  server app 127.0.0.1:${PORTS.h1App}
`,
  );
  return ["haproxy", "-f", file];
}

const TARGETS = {
  "readiness-proxy": (protocol) => [binary, "--listen", `127.0.0.1:${PORTS.proxy}`, "--upstream", `http://127.0.0.1:${protocol === "h2" ? PORTS.h2App : PORTS.h1App}`, "--log-level", "warn", "--max-connections", "0"],
  nginx: nginxConfig,
  haproxy: haproxyConfig,
};

// Bounded: a target that cannot hold them all (HAProxy's maxconn follows the open-files limit) is reported, not waited for.
const openIdle = (count, protocol) => openIdleClients(NODE, PORTS.proxy, count, protocol, OPEN_DEADLINE_MS);

async function measure(target, protocol, count) {
  if (spawnSync("sh", ["-c", `command -v ${target === "readiness-proxy" ? binary : target}`]).status !== 0) return { skipped: `${target} not found` };
  const proxy = await startListening(TARGETS[target](protocol), PORTS.proxy);
  const pid = proxy.pid;
  try {
    // Warm: the code paths and the pools to the app, then gone; 1,200 at once, so that the
    // readiness-proxy's burst collections (1,000 arriving, 1,000 gone) run before the baseline
    // as they do during the count measured.
    for (let i = 0; i < 2; i++) {
      const warm = await openIdle(1_200, protocol);
      warm.clients.stdin.end();
      await new Promise((done) => warm.clients.once("exit", done));
    }
    const before = await lowestOver(pid, SETTLE_MS);
    const { clients, ready } = await openIdle(count, protocol);
    if (!ready) {
      clients.kill();
      return { skipped: `not all ${count} answered within ${OPEN_DEADLINE_MS / 1000} s` };
    }
    const after = await lowestOver(pid, SETTLE_MS);
    clients.stdin.end();
    await new Promise((done) => clients.once("exit", done));
    return { beforeMib: before / 1024, afterMib: after / 1024, perConnectionKib: (after - before) / count };
  } finally {
    await stop(proxy);
  }
}

const apps = spawn(NODE, [join(here, "lib/idle-apps.mjs"), String(PORTS.h1App), String(PORTS.h2App)], { stdio: "inherit" });
await waitForPort(PORTS.h1App);
await waitForPort(PORTS.h2App);
const rows = [];
try {
  for (const [protocol, list] of [["h1", counts], ["h2", h2Counts]]) {
    for (const count of list) {
      const row = { protocol: protocol === "h2" ? "h2c" : "HTTP/1.1", count };
      for (const target of targets) {
        const result = await measure(target, protocol, count);
        row[target] = result.skipped ?? `${result.perConnectionKib.toFixed(2)} KiB (${result.beforeMib.toFixed(1)} → ${result.afterMib.toFixed(1)} MiB)`;
        console.error(JSON.stringify({ target, ...row, [target]: row[target] }));
      }
      rows.push(row);
    }
  }
} finally {
  apps.kill();
}
console.log(`| protocol | idle connections | ${targets.join(" | ")} |`);
console.log(`|---|---|${targets.map(() => "---").join("|")}|`);
for (const row of rows) console.log(`| ${row.protocol} | ${row.count} | ${targets.map((target) => row[target]).join(" | ")} |`);
