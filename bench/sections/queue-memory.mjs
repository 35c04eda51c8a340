// Section 6: the memory of 10,000 requests waiting in the binary's queue (--max-concurrency 1) in front of an app that never answers: the proxy's RssAnon before and with all of them queued.
import { readFileSync } from "node:fs";
import { request } from "node:http";
import { connect, createServer } from "node:net";
import { rssAnonMb, startListening, stop } from "../lib/processes.mjs";
import { table } from "../lib/stats.mjs";

export const QUEUED_REQUESTS = 10_000;
const PORTS = { proxy: 19050, app: 19051, metrics: 19052 };
// Connections opened at once: under the listen backlog (511), so none waits on a SYN retry.
const BATCH = 500;
// From the first connection until all are queued; the queue timeout (60 s) is not reached either.
const DEADLINE_MS = 60_000;
// File descriptors besides the clients', for this process and for the proxy.
const SPARE_FDS = 100;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The soft limit on open files of this process (Node raises it to the hard limit at start, the binary too). */
function openFilesLimit() {
  const line = readFileSync("/proc/self/limits", "utf8").split("\n").find((entry) => entry.startsWith("Max open files"));
  const soft = line?.split(/\s{2,}/)[1];
  return soft === "unlimited" ? Infinity : Number(soft);
}

/** `readiness_proxy_queue_length` from the proxy's /metrics. */
function queueLength() {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port: PORTS.metrics, path: "/metrics", agent: false, timeout: 5_000 }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (body += chunk));
      res.on("end", () => resolve(Number(/^readiness_proxy_queue_length (\d+)$/m.exec(body)?.[1] ?? NaN)));
    });
    req.on("timeout", () => req.destroy(new Error("/metrics took over 5 s")));
    req.on("error", reject);
    req.end();
  });
}

/** Polls the queue length every 200 ms until `done(length)` or `deadline` (performance.now() ms); resolves to the last length read. */
async function waitForQueue(done, deadline) {
  for (;;) {
    const length = await queueLength();
    if (done(length) || performance.now() > deadline) return length;
    await sleep(200);
  }
}

/**
 * One keep-alive connection that sends one GET. Resolves once connected (the GET written), or
 * with undefined on a connection error (counted by the caller). Any answer before the end is
 * counted in `answers`: a queued request gets none.
 */
function openClient(path, answers) {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port: PORTS.proxy }, () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${PORTS.proxy}\r\n\r\n`);
      resolve(socket);
    });
    socket.once("data", () => answers.count++);
    socket.on("error", () => resolve(undefined));
  });
}

/** An app that accepts connections and reads what comes, and never answers: the one admitted request holds the only slot. */
function startSilentApp() {
  const held = new Set();
  let received = 0;
  const server = createServer((socket) => {
    held.add(socket);
    socket.on("data", (chunk) => (received += chunk.length));
    socket.on("error", () => {});
    socket.on("close", () => held.delete(socket));
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(PORTS.app, "127.0.0.1", () =>
      resolve({
        received: () => received,
        close: () => {
          for (const socket of held) socket.destroy();
          return new Promise((closed) => server.close(closed));
        },
      }),
    );
  });
}

export async function queueMemory({ binary, requests = QUEUED_REQUESTS }) {
  const needed = requests + SPARE_FDS;
  const limit = openFilesLimit();
  if (limit < needed) {
    return { markdown: `Not measured: ${requests} connections need at least ${needed} open files in this process and in the proxy, the limit here is ${limit} (raise it with \`ulimit -n ${needed}\`).` };
  }
  const app = await startSilentApp();
  const clients = [];
  let slot;
  let proxy;
  try {
    proxy = await startListening(
      [binary, "--listen", `127.0.0.1:${PORTS.proxy}`, "--upstream", `http://127.0.0.1:${PORTS.app}`, "--log-level", "warn", "--metrics-listen", `127.0.0.1:${PORTS.metrics}`]
        .concat(["--max-concurrency", "1", "--max-queue", "20000", "--queue-timeout", "60s"]),
      PORTS.proxy,
    );
    const answers = { count: 0 };
    // The one request admitted: it reaches the app, which never answers, and keeps the slot.
    slot = await openClient("/slot", answers);
    for (let waited = 0; app.received() === 0; waited += 10) {
      if (waited > 5_000) throw new Error("the first request did not reach the app within 5 s");
      await sleep(10);
    }
    const started = performance.now();
    const deadline = started + DEADLINE_MS;
    if ((await waitForQueue((length) => length === 0, deadline)) !== 0) throw new Error("the queue is not empty before any request was queued");
    const before = rssAnonMb(proxy.pid);
    let connectErrors = 0;
    for (let opened = 0; opened < requests && performance.now() < deadline; opened += BATCH) {
      const batch = await Promise.all(Array.from({ length: Math.min(BATCH, requests - opened) }, (_, index) => openClient(`/queued/${opened + index}`, answers)));
      for (const socket of batch) {
        if (socket) clients.push(socket);
        else connectErrors++;
      }
    }
    const queued = await waitForQueue((length) => length >= requests, deadline);
    const queueSeconds = (performance.now() - started) / 1000;
    const withQueue = rssAnonMb(proxy.pid);
    console.error(`  ${queued} queued in ${queueSeconds.toFixed(1)} s: RssAnon ${before.toFixed(1)} -> ${withQueue.toFixed(1)} MB; ${connectErrors} connection errors, ${answers.count} answered early`);
    // The clients leave: each leaves the queue (CONTRACT §10); the slot's request is still in flight.
    for (const socket of clients.splice(0)) socket.destroy();
    const left = await waitForQueue((length) => length === 0, performance.now() + 10_000);
    const after = rssAnonMb(proxy.pid);
    const addedBytes = (withQueue - before) * 2 ** 20;
    const rows = [
      ["RssAnon with the one admitted request in flight, before any is queued, MB", before.toFixed(1)],
      [`RssAnon with ${queued.toLocaleString("en")} requests queued (readiness_proxy_queue_length), MB`, withQueue.toFixed(1)],
      ["added by the queued requests, MB", (withQueue - before).toFixed(1)],
      ["per queued request, bytes (its waiting client connection's socket and parser included)", queued > 0 ? (addedBytes / queued).toFixed(0) : "-"],
      ["RssAnon after their clients closed the connections, MB", `${after.toFixed(1)} (queue length then: ${left})`],
      [`time to open ${requests.toLocaleString("en")} connections and see them all queued, s`, queueSeconds.toFixed(1)],
    ];
    const notes = [];
    if (queued < requests) notes.push(`Only ${queued} of ${requests} were queued within ${DEADLINE_MS / 1000} s.`);
    if (connectErrors > 0) notes.push(`${connectErrors} connections failed.`);
    if (answers.count > 0) notes.push(`${answers.count} requests were answered while they should have been waiting (refused or timed out).`);
    return { markdown: [table(["measure", "value"], rows), ...(notes.length ? ["", notes.join(" ")] : [])].join("\n") };
  } finally {
    for (const socket of clients) socket.destroy();
    slot?.destroy();
    if (proxy) await stop(proxy);
    await app.close();
  }
}
