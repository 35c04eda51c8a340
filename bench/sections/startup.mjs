// Section 5: exec to first /health 200 of the binary vs `node -e 0` of the same runtime; memory; size.
import { spawn } from "node:child_process";
import { statSync } from "node:fs";
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

/** ms from spawn to the first 200 on /health (polling every 2 ms, bounded at 10 s). */
async function timeToHealthy(binary) {
  const started = performance.now();
  const child = spawn(binary, ["--listen", `127.0.0.1:${PORT}`, "--log-level", "warn"], { stdio: "ignore" });
  while (!(await healthOk())) {
    if (performance.now() - started > 10_000) throw new Error("no /health within 10 s");
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

export async function startup({ runs, runtime, binary, rssAfterRunMb }) {
  const ready = [];
  const bare = [];
  const idleRss = [];
  for (let run = 0; run < runs; run++) {
    bare.push(await timeToExit([runtime, "-e", "0"]));
    const { ms, child } = await timeToHealthy(binary);
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
  ];
  return { markdown: table(["measure", `median (min-max) of ${runs}, ms unless said`], rows), ratio, idleRssMb: median(idleRss) };
}
