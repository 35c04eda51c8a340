// How late a new connection is answered while a storm of others connects and loads the proxy (the all-loads soak's clients at once): the h2c server preface and an HTTP/1.1 /healthz, probed every 250 ms, as the kubelet's probes come on new connections.
// Usage: node bench/connection-storm.mjs [--seconds 5] [--rounds 3] [--binary dist/readiness-proxy] [--baseline <binary>]
import { createConnection } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runH2load } from "./lib/h2load.mjs";
import { startListening, stop } from "./lib/processes.mjs";
import { median, table } from "./lib/stats.mjs";
import { runWrk } from "./lib/wrk.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : fallback);
const seconds = Number(option("seconds", "5"));
const rounds = Number(option("rounds", "3"));
const binaries = [option("binary", join(here, "../dist/readiness-proxy")), option("baseline")].filter(Boolean);
const PORTS = { upstream: 19195, proxy: 19196 };
const PROBE_EVERY_MS = 250;
/** A probe still unanswered after this long counts as this long (the kubelet's default timeout is 1 s). */
const GIVE_UP_MS = 8000;
const H2_PREFACE = Buffer.concat([Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])]);
const HEALTHZ = "GET /healthz HTTP/1.1\r\nhost: probe\r\nconnection: close\r\n\r\n";

/** Milliseconds from connect() to the first byte back, on a new connection that sends `request`. */
function probe(request) {
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = createConnection(PORTS.proxy, "127.0.0.1", () => socket.write(request));
    const end = (ms) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ms);
    };
    const timer = setTimeout(() => end(GIVE_UP_MS), GIVE_UP_MS);
    socket.once("data", () => end(performance.now() - started));
    socket.on("error", () => end(GIVE_UP_MS));
  });
}

/** One storm through `binary`: the soak's HTTP/1.1 and h2c clients all start at once, probes alongside. */
async function storm(binary) {
  const proxy = await startListening([binary, "--listen", `127.0.0.1:${PORTS.proxy}`, "--upstream", `http://127.0.0.1:${PORTS.upstream}`, "--log-level", "warn"], PORTS.proxy);
  try {
    const url = (path) => `http://127.0.0.1:${PORTS.proxy}${path}`;
    const loads = [
      runWrk(url("/small"), { connections: 200, seconds }),
      runWrk(url("/big"), { connections: 50, seconds }),
      runH2load(url("/small"), { clients: 50, streams: 20, seconds }),
      runH2load(url("/big"), { clients: 10, streams: 10, seconds }),
    ];
    const h2 = [];
    const healthz = [];
    const started = performance.now();
    while (performance.now() - started < seconds * 1000) {
      h2.push(probe(H2_PREFACE));
      healthz.push(probe(HEALTHZ));
      await new Promise((resolve) => setTimeout(resolve, PROBE_EVERY_MS));
    }
    const results = { h2: await Promise.all(h2), healthz: await Promise.all(healthz) };
    await Promise.all(loads);
    return results;
  } finally {
    await stop(proxy);
  }
}

const describe = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const late = sorted.filter((ms) => ms > 1000).length;
  return `${median(sorted).toFixed(0)} / ${sorted[Math.floor(sorted.length * 0.9)].toFixed(0)} / ${sorted.at(-1).toFixed(0)} ms, ${late} of ${sorted.length} past 1 s`;
};

const upstream = await startListening([process.execPath, join(here, "targets/soak-upstream.mjs"), String(PORTS.upstream)], PORTS.upstream);
try {
  const rows = [];
  for (let round = 1; round <= rounds; round++) {
    for (const binary of round % 2 === 1 ? binaries : [...binaries].reverse()) {
      const result = await storm(binary);
      console.error(`  round ${round} ${binary}: h2c preface ${describe(result.h2)}; /healthz ${describe(result.healthz)}`);
      rows.push([binary, String(round), describe(result.h2), describe(result.healthz)]);
    }
  }
  console.log(table(["binary", "round", "h2c server preface: p50 / p90 / max", "HTTP/1.1 /healthz first byte: p50 / p90 / max"], rows));
} finally {
  await stop(upstream);
}
