// Measures the built binary's memory (VmRSS, RssAnon, RssFile of /proc/<pid>/status) idle and under a short bounded load on loopback: the figures docs/kubernetes.md sizes the manifests' resources from.
// Usage: node docs/deploy/measure-memory.mjs [binary] [requests] [concurrency] [http1|h2]  (defaults: dist/readiness-proxy 20000 64 http1)
// h2: the clients speak HTTP/2 with prior knowledge over 4 connections and the app is h2c, as for a gRPC app.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Agent, createServer, request } from "node:http";
import { connect as connectH2, createServer as createH2Server } from "node:http2";
import { once } from "node:events";

const [binary = "dist/readiness-proxy", requestsText = "20000", concurrencyText = "64", protocol = "http1"] = process.argv.slice(2);
if (protocol !== "http1" && protocol !== "h2") throw new Error(`protocol: expected http1 or h2, got ${JSON.stringify(protocol)}`);
const H2_CONNECTIONS = 4;
const requests = Number(requestsText);
const concurrency = Number(concurrencyText);
// Every wait is bounded: a broken build fails the measurement instead of hanging it.
const LOAD_BUDGET_MS = 60_000;

/** The memory lines of a process's status, in MiB. */
function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB$`, "m").exec(status)?.[1] ?? NaN);
  const mib = (value) => Math.round((value / 1024) * 10) / 10;
  return { VmRSS: mib(kib("VmRSS")), RssAnon: mib(kib("RssAnon")), RssFile: mib(kib("RssFile")), VmHWM: mib(kib("VmHWM")) };
}

const body = Buffer.alloc(1024, "x");
const upstream = (protocol === "h2" ? createH2Server() : createServer()).on("request", (_req, res) => res.end(body)).listen(0, "127.0.0.1");
await once(upstream, "listening");
const probe = createServer().listen(0, "127.0.0.1");
await once(probe, "listening");
const port = probe.address().port;
probe.close();

const proxy = spawn(binary, ["--listen", `127.0.0.1:${port}`, "--upstream", `http://127.0.0.1:${upstream.address().port}`, "--log-level", "warn"], { stdio: ["ignore", "inherit", "inherit"] });
const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
/** Opened once the proxy answers /health. */
let sessions = [];
let nextSession = 0;
const getH2 = (path) =>
  new Promise((resolve, reject) => {
    const session = sessions[nextSession++ % sessions.length];
    const stream = session.request({ ":path": path });
    let status = 0;
    stream.on("response", (headers) => (status = headers[":status"]));
    stream.on("error", reject);
    stream.resume();
    stream.on("end", () => resolve(status));
    stream.end();
  });
const getH1 = (path) =>
  new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, agent }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode));
    });
    req.on("error", reject);
    req.end();
  });
const get = (path) => (protocol === "h2" && path !== "/health" ? getH2(path) : getH1(path));

try {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (Date.now() > deadline) throw new Error("the proxy did not answer /health within 10 s");
    if ((await get("/health").catch(() => 0)) === 200) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  // Idle: after start-up settles (the first check ran, the lazy modules are loaded).
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const idle = memoryOf(proxy.pid);
  if (protocol === "h2") sessions = Array.from({ length: H2_CONNECTIONS }, () => connectH2(`http://127.0.0.1:${port}`));

  let peak = idle;
  const sampler = setInterval(() => {
    const now = memoryOf(proxy.pid);
    if (now.VmRSS > peak.VmRSS) peak = now;
  }, 100);
  const started = Date.now();
  let sent = 0;
  let failed = 0;
  const worker = async () => {
    while (sent < requests && Date.now() - started < LOAD_BUDGET_MS) {
      sent++;
      const status = await get(sent % 100 === 0 ? "/readyz" : "/load").catch(() => 0);
      if (status !== 200) failed++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  clearInterval(sampler);
  const after = memoryOf(proxy.pid);
  console.log(JSON.stringify({ binary, protocol, requests: sent, concurrency, failed, seconds: (Date.now() - started) / 1000, idle, peakDuringLoad: peak, afterLoad: after }, null, 2));
} finally {
  agent.destroy();
  for (const session of sessions) session.destroy();
  proxy.kill("SIGTERM");
  upstream.close();
}
