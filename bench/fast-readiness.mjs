// Time from an app's listen to a kubelet-shaped prober's first 200 (periodSeconds 1, timeoutSeconds 1), with `/readyz` and with `/readyz?wait=800ms`.
// Usage: node bench/fast-readiness.mjs [--binary PATH] [--trials 5]   (loopback only; every trial bounded by 5 s)
import { spawn } from "node:child_process";
import { request } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const here = fileURLToPath(new URL(".", import.meta.url));
const { values } = parseArgs({ options: { binary: { type: "string", default: join(here, "../dist/readiness-proxy") }, trials: { type: "string", default: "5" } } });

// Binds a TCP port without listening (so it stays ours), prints it, listens on "listen".
const HOLDER = `import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1], flush=True)
for line in sys.stdin:
    s.listen(8); print("listening", flush=True)`;

function get(port, path, timeoutMs) {
  return new Promise((resolve) => {
    const req = request({ host: "127.0.0.1", port, path, agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode));
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(0));
    req.end();
  });
}

async function trial(path, offsetMs) {
  const holder = spawn("python3", ["-c", HOLDER], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = holder.stdout.setEncoding("utf8");
  const appPort = Number(await new Promise((resolve) => lines.once("data", resolve)));
  const proxyPort = 18300 + Math.floor(Math.random() * 500);
  const proxy = spawn(values.binary, ["--listen", `127.0.0.1:${proxyPort}`, "--readiness-required-listener", String(appPort), "--log-level", "warn"], { stdio: "ignore" });
  while ((await get(proxyPort, "/healthz", 200)) !== 200) await new Promise((resolve) => setTimeout(resolve, 20));
  // The prober: a probe every 1 s from its start, each with a 1 s timeout, as the kubelet's.
  const proberStart = performance.now();
  let listenedAt;
  setTimeout(() => {
    holder.stdin.write("listen\n");
    lines.once("data", () => (listenedAt = performance.now()));
  }, offsetMs);
  let readyAt;
  for (let probe = 0; probe < 5 && readyAt === undefined; probe++) {
    const due = proberStart + probe * 1000;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
    if ((await get(proxyPort, path, 1000)) === 200) readyAt = performance.now();
  }
  proxy.kill("SIGKILL");
  holder.kill("SIGKILL");
  return readyAt === undefined || listenedAt === undefined ? NaN : readyAt - listenedAt;
}

const rows = { "/readyz": [], "/readyz?wait=800ms": [] };
for (let index = 0; index < Number(values.trials); index++) {
  const offsetMs = 100 + ((index * 373) % 800); // the listen lands at different points of the period
  for (const path of Object.keys(rows)) rows[path].push(await trial(path, offsetMs));
}
console.log("\n| probe path | listen -> first 200, ms (each trial) | median |\n| --- | --- | --- |");
for (const [path, times] of Object.entries(rows)) {
  const sorted = [...times].sort((a, b) => a - b);
  console.log(`| \`${path}\` | ${times.map((ms) => ms.toFixed(0)).join(", ")} | ${sorted[Math.floor(sorted.length / 2)].toFixed(0)} |`);
}
