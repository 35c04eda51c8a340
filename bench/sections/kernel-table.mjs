// Runs inside a fresh network namespace: opens PAIRS loopback connections, then times how long the kernel takes to produce
// /proc/net/tcp, a full scan, and `ss -Hltn`. Usage: node kernel-table.mjs BUNDLED_SCANNER_MJS PAIRS  (prints one JSON line)
import { spawnSync } from "node:child_process";
import { open } from "node:fs/promises";
import { createConnection, createServer } from "node:net";

const [scannerModule, pairsText] = process.argv.slice(2);
const { ListenerScanner } = await import(scannerModule);
const pairs = Number(pairsText);
const server = createServer(() => {});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const { port } = server.address();
const sockets = [];
for (let index = 0; index < pairs; index++) {
  sockets.push(await new Promise((resolve, reject) => {
    const socket = createConnection(port, "127.0.0.1", () => resolve(socket));
    socket.on("error", reject);
  }));
}

async function readWhole(path) {
  const file = await open(path, "r");
  const buffer = Buffer.allocUnsafe(64 * 1024);
  let total = 0;
  for (;;) {
    const { bytesRead } = await file.read(buffer, 0, buffer.length, null);
    if (bytesRead === 0) break;
    total += bytesRead;
  }
  await file.close();
  return total;
}

/** Interleaved: a read, a scan, an `ss`, RUNS times, so drift touches all three alike. */
const RUNS = 15;
const readMs = [];
const scanMs = [];
const ssMs = [];
let bytes = 0;
const scanner = new ListenerScanner({ procRoot: "/proc" });
for (let run = 0; run < RUNS; run++) {
  // The floor: the same two files, read the same way (one reused 64 KiB buffer), not parsed.
  let started = performance.now();
  bytes = (await readWhole("/proc/net/tcp")) + (await readWhole("/proc/net/tcp6"));
  readMs.push(performance.now() - started);
  started = performance.now();
  await scanner.scan();
  scanMs.push(performance.now() - started);
  started = performance.now();
  spawnSync("ss", ["-Hltn"]);
  ssMs.push(performance.now() - started);
}
console.log(JSON.stringify({ sockets: pairs * 2 + 1, bytes, readMs, scanMs, ssMs }));
for (const socket of sockets) socket.destroy();
server.close();
