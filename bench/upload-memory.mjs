// One upload through the binary, RssAnon sampled: a 64 MiB upload to an app that reads slowly (paced by backpressure), and a fast 512 MiB one.
// Usage: node bench/upload-memory.mjs [--binary dist/readiness-proxy]
import { spawn } from "node:child_process";
import { request } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { rssAnonMb, start, stop, waitForPort } from "./lib/processes.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const at = process.argv.indexOf("--binary");
const binary = at >= 0 ? process.argv[at + 1] : join(here, "../dist/readiness-proxy");
const PORTS = { proxy: 19090, fastApp: 19091, slowApp: 19092 };
const CHUNK = Buffer.alloc(64 * 1024, 0x75);

/** Sends `bytes` as one POST as fast as the proxy takes them; resolves when the answer is in. */
function upload(port, bytes) {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path: "/upload", method: "POST", headers: { "content-length": bytes } }, (res) => {
      res.resume();
      res.on("end", resolve);
    });
    req.on("error", reject);
    let sent = 0;
    const pump = () => {
      while (sent < bytes) {
        sent += CHUNK.length;
        if (!req.write(CHUNK)) return void req.once("drain", pump);
      }
      req.end();
    };
    pump();
  });
}

async function measure(name, appPort, bytes) {
  const proxy = start([binary, "--listen", `127.0.0.1:${PORTS.proxy}`, "--upstream", `http://127.0.0.1:${appPort}`, "--log-level", "warn"]);
  await waitForPort(PORTS.proxy);
  const base = rssAnonMb(proxy.pid);
  let peak = base;
  const sampler = setInterval(() => (peak = Math.max(peak, rssAnonMb(proxy.pid))), 50);
  const started = performance.now();
  await upload(PORTS.proxy, bytes);
  clearInterval(sampler);
  const after = rssAnonMb(proxy.pid);
  console.log(`${name}: RssAnon ${base.toFixed(1)} MB before, ${peak.toFixed(1)} peak (+${(peak - base).toFixed(1)}), ${after.toFixed(1)} after; ${((performance.now() - started) / 1000).toFixed(1)} s`);
  await stop(proxy);
}

const fastApp = start([process.execPath, join(here, "targets/soak-upstream.mjs"), String(PORTS.fastApp)]);
// The slow app reads a chunk, then waits 2 ms: the whole path is paced by backpressure.
const slowApp = spawn(process.execPath, ["-e", `require("node:http").createServer((req, res) => { req.on("data", () => { req.pause(); setTimeout(() => req.resume(), 2); }); req.on("end", () => res.end("ok")); }).listen(${PORTS.slowApp}, "127.0.0.1")`], { stdio: "ignore" });
try {
  await Promise.all([waitForPort(PORTS.fastApp), waitForPort(PORTS.slowApp)]);
  await measure("64 MiB to an app reading slowly", PORTS.slowApp, 64 * 1024 * 1024);
  await measure("512 MiB as fast as it goes", PORTS.fastApp, 512 * 1024 * 1024);
} finally {
  await Promise.all([fastApp, slowApp].map(stop));
}
