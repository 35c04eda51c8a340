// CPU an idle proxy spends holding N idle keep-alive clients (its once-a-second sweep): utime+stime from /proc over a window, with no traffic at all, against a baseline binary side by side.
// Usage: node bench/idle-sweep-cpu.mjs [--count 10000] [--protocol h1|h2] [--seconds 20] [--settle 5] [--rounds 2] [--binary dist/readiness-proxy] [--baseline <binary>]
import { spawn } from "node:child_process";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { cpuMicros, startListening, stop, waitForPort } from "./lib/processes.mjs";
import { openIdleClients } from "./lib/open-idle-clients.mjs";
import { option } from "./lib/options.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const count = Number(option("count", "10000"));
const protocol = option("protocol", "h1");
const seconds = Number(option("seconds", "20"));
const rounds = Number(option("rounds", "2"));
const binaries = [resolve(option("binary", join(here, "../dist/readiness-proxy")))];
const baseline = option("baseline", undefined);
if (baseline !== undefined) binaries.push(resolve(baseline));
const NODE = process.execPath;
const PORTS = { proxy: 19710, h1App: 19711, h2App: 19712 };
/** After the last answer: the sweep parks what the exchanges lent, the burst's collections run; not counted. */
const SETTLE_MS = Number(option("settle", "5")) * 1000;
/** From the first client's connect until every one has its answer. */
const OPEN_DEADLINE_MS = 90_000;
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

const openIdle = () => openIdleClients(NODE, PORTS.proxy, count, protocol, OPEN_DEADLINE_MS);

/** CPU ms per second of the proxy: with no client (the floor), then with `count` idle clients. */
async function measure(binary) {
  const upstream = `http://127.0.0.1:${protocol === "h2" ? PORTS.h2App : PORTS.h1App}`;
  const proxy = await startListening([binary, "--listen", `127.0.0.1:${PORTS.proxy}`, "--upstream", upstream, "--log-level", "warn", "--max-connections", "0"], PORTS.proxy);
  const cpuMsPerSecond = async () => {
    const [cpu0, t0] = [cpuMicros(proxy.pid), performance.now()];
    await sleep(seconds * 1000);
    return (cpuMicros(proxy.pid) - cpu0) / (performance.now() - t0);
  };
  try {
    await sleep(SETTLE_MS);
    const empty = await cpuMsPerSecond();
    const { clients, ready } = await openIdle();
    try {
      if (!ready) return { skipped: `not all ${count} answered within ${OPEN_DEADLINE_MS / 1000} s` };
      await sleep(SETTLE_MS);
      return { empty, idle: await cpuMsPerSecond() };
    } finally {
      clients.stdin.end();
      await new Promise((done) => (clients.exitCode !== null ? done() : clients.once("exit", done)));
    }
  } finally {
    await stop(proxy);
  }
}

const apps = spawn(NODE, [join(here, "lib/idle-apps.mjs"), String(PORTS.h1App), String(PORTS.h2App)], { stdio: "inherit" });
const results = binaries.map(() => []);
try {
  await waitForPort(PORTS.h1App);
  await waitForPort(PORTS.h2App);
  for (let round = 0; round < rounds; round++) {
    // Rotated, so neither binary always runs first on a machine whose load changes.
    const order = binaries.map((_, index) => (index + round) % binaries.length);
    for (const index of order) {
      const result = await measure(binaries[index]);
      console.error(JSON.stringify({ round, binary: binaries[index], ...result }));
      results[index].push(result);
    }
  }
} finally {
  apps.kill();
}
const median = (values) => values.slice().sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(`| binary | ${protocol === "h2" ? "h2c" : "HTTP/1.1"} idle clients | CPU ms/s, none open | CPU ms/s, ${count} idle | per 1,000 idle (µs/s) |`);
console.log("|---|---|---|---|---|");
binaries.forEach((binary, index) => {
  const done = results[index].filter((result) => result.skipped === undefined);
  if (done.length === 0) {
    console.log(`| ${binary} | ${count} | ${results[index][0]?.skipped ?? "-"} | | |`);
    return;
  }
  const empty = median(done.map((result) => result.empty));
  const idle = median(done.map((result) => result.idle));
  const runs = done.map((result) => result.idle.toFixed(2)).join(", ");
  console.log(`| ${binary} | ${count} | ${empty.toFixed(2)} | ${idle.toFixed(2)} (${runs}) | ${(((idle - empty) * 1000) / (count / 1000)).toFixed(0)} |`);
});
