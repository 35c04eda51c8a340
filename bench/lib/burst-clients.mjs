// The parts of section 6's burst: a slow app, a warm-up through the proxy, thousands of client connections opened at once, and a wait until the proxy has read them all.
import { readdirSync } from "node:fs";
import { connect, createServer } from "node:net";
import { cpuMicros } from "./processes.mjs";

/** The path the slow app answers at once (the warm-up); every other request is held unanswered. */
export const WARM_PATH = "/warm";
// Connections opened at once: under the listen backlog (511), so none waits on a SYN retry.
const BATCH = 500;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * An app on 127.0.0.1:`port` that answers GET /warm at once (keep-alive) and holds every other
 * request without an answer until its connection closes: slower than any measurement. `held()`
 * counts the requests it holds. Request heads are told apart by their blank line (no bodies here).
 */
export function startSlowApp(port) {
  const sockets = new Set();
  let held = 0;
  const server = createServer((socket) => {
    sockets.add(socket);
    let pending = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk) => {
      pending += chunk;
      for (let end = pending.indexOf("\r\n\r\n"); end >= 0; end = pending.indexOf("\r\n\r\n")) {
        const head = pending.slice(0, end);
        pending = pending.slice(end + 4);
        if (head.startsWith(`GET ${WARM_PATH} `)) socket.write("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
        else held++;
      }
    });
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () =>
      resolve({
        held: () => held,
        /** Forgets what it held (between runs: the proxy that sent them is gone). */
        reset: () => {
          for (const socket of sockets) socket.destroy();
          held = 0;
        },
        close: () => {
          for (const socket of sockets) socket.destroy();
          return new Promise((closed) => server.close(closed));
        },
      }),
    );
  });
}

/** `requests` GET /warm through the proxy on `connections` keep-alive connections, one in flight on each; rejects after `timeoutMs`. */
export async function warmUp(port, { connections = 10, requests = 2000, timeoutMs = 30_000 } = {}) {
  const each = Math.ceil(requests / connections);
  const one = () =>
    new Promise((resolve, reject) => {
      const socket = connect({ host: "127.0.0.1", port });
      let answered = 0;
      let received = "";
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`warm-up: ${answered} of ${each} answered within ${timeoutMs} ms`));
      }, timeoutMs);
      const send = () => socket.write(`GET ${WARM_PATH} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
      socket.setEncoding("latin1");
      socket.on("connect", send);
      socket.on("data", (chunk) => {
        received += chunk;
        for (let end = received.indexOf("\r\n\r\nok"); end >= 0; end = received.indexOf("\r\n\r\nok")) {
          received = received.slice(end + 6);
          if (++answered === each) {
            clearTimeout(timer);
            socket.destroy();
            resolve();
            return;
          }
          send();
        }
      });
      socket.on("error", (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
  await Promise.all(Array.from({ length: connections }, one));
}

/**
 * Opens `count` connections to the proxy, BATCH at a time, each sending one GET (`send`) or
 * nothing (idle keep-alive clients). Resolves to `{ sockets, errors, answered() }`: the open
 * sockets, the connections that failed, and how many got any answer (a queued request gets none).
 */
export async function openBurst(port, { count, send, deadline }) {
  const sockets = [];
  let errors = 0;
  let answered = 0;
  const open = (index) =>
    new Promise((resolve) => {
      const socket = connect({ host: "127.0.0.1", port }, () => {
        if (send) socket.write(`GET /queued/${index} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
        resolve(socket);
      });
      socket.once("data", () => answered++);
      socket.on("error", () => resolve(undefined));
    });
  for (let opened = 0; opened < count && performance.now() < deadline; opened += BATCH) {
    const batch = await Promise.all(Array.from({ length: Math.min(BATCH, count - opened) }, (_, index) => open(opened + index)));
    for (const socket of batch) {
      if (socket) sockets.push(socket);
      else errors++;
    }
  }
  return { sockets, errors, answered: () => answered };
}

/** Open file descriptors of `pid`. */
export function openFiles(pid) {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/**
 * Resolves to true once the proxy holds at least `files` descriptors and has used at most
 * `idleCpuMs` of CPU over the last `quietMs` (it has accepted and read everything sent; its
 * once-a-second sweep of the connections costs a tick now and then), or to false at `deadline`
 * (performance.now() ms).
 */
export async function waitUntilQuiet(pid, { files, quietMs = 1000, idleCpuMs = 20, deadline }) {
  const samples = []; // [performance.now(), cpu µs]
  while (performance.now() < deadline) {
    await sleep(100);
    const now = performance.now();
    samples.push([now, cpuMicros(pid)]);
    while (samples.length > 1 && now - samples[1][0] >= quietMs) samples.shift();
    const [since, cpuThen] = samples[0];
    if (openFiles(pid) < files) samples.splice(0, samples.length - 1);
    else if (now - since >= quietMs && samples.at(-1)[1] - cpuThen <= idleCpuMs * 1000) return true;
  }
  return false;
}
