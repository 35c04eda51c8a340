// Section 5: exec to first /health 200 of the binary vs `node -e 0` of the same runtime and vs a SEA that only listens; memory; size; the other architecture's binary, emulated.
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
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

/**
 * The floor of "first /health 200": a SEA of the same runtime and flags whose whole program is a
 * node:net server answering 200, so the listen, the client's polling and one exchange, which
 * `node -e 0` does not have, are measured alone. null (and why) when it cannot be built here.
 */
function buildFloorBinary(runtime, root) {
  const dir = mkdtempSync(join(tmpdir(), "bench-startup-floor-"));
  const program = [
    'const at = process.argv.indexOf("--listen");',
    'const [host, port] = process.argv[at + 1].split(":");',
    'require("node:net").createServer((s) => s.on("data", () => s.end("HTTP/1.1 200 OK\\r\\ncontent-length: 0\\r\\nconnection: close\\r\\n\\r\\n"))).listen(Number(port), host);',
  ].join("\n");
  writeFileSync(join(dir, "floor.cjs"), program);
  const config = { main: join(dir, "floor.cjs"), output: join(dir, "floor.blob"), disableExperimentalSEAWarning: true, useCodeCache: true, execArgv: ["--max-semi-space-size=2"], execArgvExtension: "none" };
  writeFileSync(join(dir, "sea-config.json"), JSON.stringify(config));
  const binary = join(dir, "floor");
  const steps = [
    [runtime, ["--experimental-sea-config", join(dir, "sea-config.json")]],
    ["strip", [binary]],
    [process.execPath, [join(root, "node_modules/postject/dist/cli.js"), binary, "NODE_SEA_BLOB", config.output, "--sentinel-fuse", "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2"]],
  ];
  try {
    copyFileSync(runtime, binary);
    for (const [command, args] of steps) {
      const result = spawnSync(command, args, { encoding: "utf8" });
      if (result.status !== 0) throw new Error(`${command} failed: ${(result.stderr || result.error?.message || "").trim().split("\n")[0]}`);
    }
    return { binary, dispose: () => rmSync(dir, { recursive: true, force: true }) };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    return { reason: error.message };
  }
}

export async function startup({ runs, runtime, binary, baseline, root, rssAfterRunMb }) {
  const ready = [];
  const baselineReady = [];
  const bare = [];
  const idleRss = [];
  const floor = buildFloorBinary(runtime, root);
  const floorReady = [];
  for (let run = 0; run < runs; run++) {
    bare.push(await timeToExit([runtime, "-e", "0"]));
    if (floor.binary) {
      const started = await timeToHealthy([floor.binary]);
      floorReady.push(started.ms);
      await stop(started.child);
    }
    // A --baseline build starts in the same passes, so "start-up unchanged" is one run's ratio.
    if (baseline) {
      const started = await timeToHealthy([baseline]);
      baselineReady.push(started.ms);
      await stop(started.child);
    }
    const { ms, child } = await timeToHealthy([binary]);
    ready.push(ms);
    await new Promise((resolve) => setTimeout(resolve, 200)); // let start-up garbage settle before reading memory
    idleRss.push(rssAnonMb(child.pid));
    await stop(child);
  }
  floor.dispose?.();
  const ratio = median(ready) / median(bare);
  const floorRows = floor.binary
    ? [
        ["floor: a SEA of the same runtime that only listens and answers 200, exec to first 200", spread(floorReady, 0)],
        ["floor / `node -e 0` (the least this measure can give); binary / floor", `${(median(floorReady) / median(bare)).toFixed(2)}x; ${(median(ready) / median(floorReady)).toFixed(2)}x`],
      ]
    : [["floor (a SEA that only listens)", `not measured: ${floor.reason}`]];
  const rows = [
    ["binary: exec to first /health 200", spread(ready, 0)],
    ["`node -e 0`, same runtime", spread(bare, 0)],
    ["ratio", `${ratio.toFixed(2)}x`],
    ...floorRows,
    ...(baseline ? [["--baseline: exec to first /health 200; binary / --baseline", `${spread(baselineReady, 0)}; ${(median(ready) / median(baselineReady)).toFixed(2)}x`]] : []),
    ["RssAnon idle after start, MB", spread(idleRss, 1)],
    ["RssAnon after the proxy run (section 1), MB", rssAfterRunMb === undefined ? "not measured" : rssAfterRunMb.toFixed(1)],
    ["binary size, MB", (statSync(binary).size / 1e6).toFixed(1)],
    ...(await emulatedStartup(root, Math.min(runs, 5))),
  ];
  return { markdown: table(["measure", `median (min-max) of ${runs}, ms unless said`], rows), ratio, idleRssMb: median(idleRss) };
}
