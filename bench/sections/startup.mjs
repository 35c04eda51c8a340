// Section 5: exec to first /health 200 of the binary vs `node -e 0` of the same runtime; memory; size; the other architecture's binary, emulated.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { request } from "node:http";
import { rssAnonMb, stop } from "../lib/processes.mjs";
import { median, spread, table } from "../lib/stats.mjs";

const PORT = 19030;

function healthOk() {
  return new Promise((resolve) => {
    const req = request({ host: "127.0.0.1", port: PORT, path: "/health", agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode === 200));
    });
    req.on("error", () => resolve(false));
    req.end();
  });
}

/** ms from spawn to the first 200 on /health (polling every 2 ms, bounded at 30 s: emulated starts take seconds). */
async function timeToHealthy(argv) {
  const started = performance.now();
  const child = spawn(argv[0], [...argv.slice(1), "--listen", `127.0.0.1:${PORT}`, "--log-level", "warn"], { stdio: "ignore" });
  while (!(await healthOk())) {
    if (performance.now() - started > 30_000) throw new Error("no /health within 30 s");
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  return { ms: performance.now() - started, child };
}

function timeToExit(argv) {
  return new Promise((resolve) => {
    const started = performance.now();
    spawn(argv[0], argv.slice(1), { stdio: "ignore" }).on("exit", () => resolve(performance.now() - started));
  });
}

/** The release binary of the architecture this host is not, and how qemu-user runs it (null when either is missing). */
function emulatedBinary(root) {
  const target = process.arch === "x64" ? { arch: "arm64", qemu: "qemu-aarch64-static", libraries: "/usr/aarch64-linux-gnu" } : { arch: "x64", qemu: "qemu-x86_64-static", libraries: "/usr/x86_64-linux-gnu" };
  const binary = join(root, `dist/readiness-proxy-linux-${target.arch}`);
  if (!existsSync(binary) || spawnSync(target.qemu, ["--version"]).status !== 0) return null;
  return { ...target, binary, argv: [target.qemu, "-L", target.libraries, binary] };
}

/** Start time of the other architecture's binary under qemu-user: a figure of the emulator, not of that hardware. */
async function emulatedStartup(root, runs) {
  const emulated = emulatedBinary(root);
  if (!emulated) return [["other architecture's binary under qemu", "not measured: run make release (needs qemu-user-static)"]];
  const ready = [];
  for (let run = 0; run < runs; run++) {
    const { ms, child } = await timeToHealthy(emulated.argv);
    ready.push(ms);
    await stop(child);
  }
  return [
    [`linux-${emulated.arch} binary under ${emulated.qemu} (EMULATED): exec to first /health 200`, spread(ready, 0)],
    [`linux-${emulated.arch} binary size, MB`, (statSync(emulated.binary).size / 1e6).toFixed(1)],
  ];
}

export async function startup({ runs, runtime, binary, root, rssAfterRunMb }) {
  const ready = [];
  const bare = [];
  const idleRss = [];
  for (let run = 0; run < runs; run++) {
    bare.push(await timeToExit([runtime, "-e", "0"]));
    const { ms, child } = await timeToHealthy([binary]);
    ready.push(ms);
    await new Promise((resolve) => setTimeout(resolve, 200)); // let start-up garbage settle before reading memory
    idleRss.push(rssAnonMb(child.pid));
    await stop(child);
  }
  const ratio = median(ready) / median(bare);
  const rows = [
    ["binary: exec to first /health 200", spread(ready, 0)],
    ["`node -e 0`, same runtime", spread(bare, 0)],
    ["ratio", `${ratio.toFixed(2)}x`],
    ["RssAnon idle after start, MB", spread(idleRss, 1)],
    ["RssAnon after the proxy run (section 1), MB", rssAfterRunMb === undefined ? "not measured" : rssAfterRunMb.toFixed(1)],
    ["binary size, MB", (statSync(binary).size / 1e6).toFixed(1)],
    ...(await emulatedStartup(root, Math.min(runs, 5))),
  ];
  return { markdown: table(["measure", `median (min-max) of ${runs}, ms unless said`], rows), ratio, idleRssMb: median(idleRss) };
}
