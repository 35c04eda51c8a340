// make bench: runs the benchmark sections side by side on loopback and writes the results table into bench/README.md.
// Usage: node bench/run.mjs [--rounds N] [--seconds S] [--only overhead,latency,download,tail,streaming,readyz,scan,startup,warmup,queue,accesslog,h2,grpc,alloc] [--baseline BINARY] [--binary BINARY]
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { accessLogCost } from "./sections/access-log.mjs";
import { ALLOC_CONNECTIONS, allocation } from "./sections/allocation.mjs";
import { DOWNLOAD_CONNECTIONS, download } from "./sections/download.mjs";
import { TAIL_CONNECTIONS, TAIL_RATES, fixedRateTail, tailSeconds } from "./sections/fixed-rate-tail.mjs";
import { GRPC_CONCURRENCY, grpc } from "./sections/grpc.mjs";
import { H2_CLIENTS, H2_STREAMS, h2c } from "./sections/h2c.mjs";
import { oneConnection } from "./sections/one-connection.mjs";
import { proxyOverhead, startProxyLineup } from "./sections/proxy-overhead.mjs";
import { CLIENTS, queueMemory } from "./sections/queue-memory.mjs";
import { readyzCrowd } from "./sections/readyz-crowd.mjs";
import { scanCost } from "./sections/scan-cost.mjs";
import { startup } from "./sections/startup.mjs";
import { warmUp } from "./sections/warm-up.mjs";
import { streaming } from "./sections/streaming.mjs";
import { shortRunSeconds } from "./lib/wrk.mjs";
import { peerVersions } from "./targets/peers.mjs";
import { option } from "./lib/options.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");
const rounds = Number(option("rounds", "3"));
const seconds = Number(option("seconds", "5"));
const SECTIONS = ["overhead", "latency", "download", "tail", "streaming", "readyz", "scan", "startup", "warmup", "queue", "accesslog", "h2", "grpc", "alloc"];
const only = new Set(option("only", SECTIONS.join(",")).split(","));
// Another build of the binary (today's, say) run beside this one in sections 1, 1b and 1c.
const baseline = option("baseline", undefined);

// --binary: measure another build (another worktree's) in place of this checkout's.
const binary = option("binary", join(root, "dist/readiness-proxy"));
// Peers run on the runtime the binary embeds, so the comparison is of code, not of Node versions.
const runtime = join(root, `node_modules/node-linux-${process.arch}/bin/node`);
for (const [tool, hint] of [["wrk", "apt-get install wrk"], ["nginx", "apt-get install nginx"]]) {
  if (spawnSync("sh", ["-c", `command -v ${tool}`]).status !== 0) {
    console.error(`bench needs ${tool} (${hint})`);
    process.exit(2);
  }
}
if (!existsSync(binary)) {
  console.error("bench needs the binary: make build");
  process.exit(2);
}
if (baseline !== undefined && !existsSync(baseline)) {
  console.error(`--baseline: no such binary: ${baseline}`);
  process.exit(2);
}

const started = Date.now();
const context = { rounds, seconds, runtime, binary, baseline, here, root };
const parts = [];
const section = async (key, title, run) => {
  if (!only.has(key)) return undefined;
  console.error(`== ${title}`);
  const result = await run();
  parts.push(`### ${title}\n\n${result.markdown}\n`);
  return result;
};

// Sections 1, 1b and 1c share one lineup of contenders: started and warmed up once.
const lineup = ["overhead", "latency", "download"].some((key) => only.has(key)) ? await startProxyLineup(context) : undefined;
let overhead;
try {
  overhead = await section("overhead", `1. Proxy overhead: 100-byte file, 50 keep-alive connections, ${seconds} s a run, ${rounds} rounds rotated`, () => proxyOverhead(context, lineup));
  await section("latency", `1b. Added latency at one connection: 100-byte file, one request in flight, interleaved across the targets, ${rounds} rounds of ${shortRunSeconds(seconds)} s per target`, () => oneConnection(context, lineup));
  await section("download", `1c. 1 MiB downloads: ${DOWNLOAD_CONNECTIONS} keep-alive connections, ${shortRunSeconds(seconds)} s a run, ${rounds} rounds rotated`, () => download(context, lineup));
} finally {
  await lineup?.stop();
}
await section("tail", `1d. Tail under a steady load: an open loop at ${TAIL_RATES.map((rate) => rate.toLocaleString("en")).join(" and ")} req/s over ${TAIL_CONNECTIONS} keep-alive connections, each request timed from when it was due, ${tailSeconds(seconds)} s a run, ${rounds} rounds rotated`, () => fixedRateTail(context));
await section("streaming", `2. Streaming: SSE, 100 events 10 ms apart, ${rounds} rounds rotated`, () => streaming(context));
await section("readyz", `3. /readyz under a crowd: 256 keep-alive callers, ${seconds} s a run, ${rounds} rounds rotated`, () => readyzCrowd(context));
await section("scan", "4. Scan cost against table size", () => scanCost(context));
await section("startup", "5. Start-up and footprint", () => startup({ ...context, runs: 10, rssAfterRunMb: overhead?.rssAfterRunMb }));
// A fresh process per run (about 20 s each), two rounds whatever --rounds says.
await section("warmup", "5b. A new replica's first seconds: the first ten 1-s slices after /readyz turns 200 against the same process's steady state, 2 rounds", () =>
  warmUp({ contenders: [{ name: "readiness-proxy (binary)", kind: "proxy", argv: [binary] }, ...(baseline ? [{ name: "readiness-proxy (--baseline binary)", kind: "proxy", argv: [baseline] }] : []), { name: "nginx proxy", kind: "nginx" }], rounds: 2, root, here }),
);
// One round: memory figures move little between runs, and each run waits 30 s after its burst.
await section("queue", `6. Memory per waiting client and after a burst: ${CLIENTS.toLocaleString("en")} clients, --max-concurrency 4 --max-queue 10000, a slow app`, () => queueMemory({ ...context, rounds: 1 }));
await section("accesslog", `7. Access log cost: the 100-byte file with and without --access-log, 25 keep-alive connections each, all at once, ${seconds} s a run, ${rounds} rounds`, () => accessLogCost(context));
await section("h2", `7. h2c in and out: h2load -c${H2_CLIENTS} -m${H2_STREAMS}, 100-byte file from an h2c nginx, ${seconds} s a run, ${rounds} rounds rotated`, () => h2c(context));
await section("grpc", `8. gRPC unary calls: grpc-go, ${GRPC_CONCURRENCY} in flight on one channel, to a Go gRPC server, ${seconds} s a run, ${rounds} rounds rotated`, () => grpc(context));
await section("alloc", `9. Allocation per proxied HTTP/1.1 request and GC pauses: wrk -c${ALLOC_CONNECTIONS}, ${seconds} s a run, ${rounds} rounds rotated`, () => allocation(context));

const runtimeVersion = execFileSync(runtime, ["--version"], { encoding: "utf8" }).trim();
const machine = `${cpus().length} × ${cpus()[0]?.model ?? "unknown CPU"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Linux ${execFileSync("uname", ["-r"], { encoding: "utf8" }).trim()}`;
const header = [
  `Measured ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC on ${machine}; load generator, upstream and proxies share the cores.`,
  `readiness-proxy: \`${binary === join(root, "dist/readiness-proxy") ? "dist/readiness-proxy" : binary}\` (Node ${runtimeVersion} embedded); peers on the same Node ${runtimeVersion}; wrk ${(spawnSync("wrk", ["-v"], { encoding: "utf8" }).stdout || "").split(" ")[1] ?? ""}.`,
  `Peers: ${peerVersions()} (Debian's).${baseline ? ` --baseline: \`${baseline}\` (${execFileSync(baseline, ["--version"], { encoding: "utf8" }).trim()}).` : ""}`,
  `Whole run: ${((Date.now() - started) / 1000).toFixed(0)} s. Medians with (min-max) over the rounds.`,
].join("\n");
const markdown = `${header}\n\n${parts.join("\n")}`;
mkdirSync(join(here, "results"), { recursive: true });
writeFileSync(join(here, "results/latest.md"), markdown);
const readmePath = join(here, "README.md");
const readme = readFileSync(readmePath, "utf8");
const marked = /<!-- results:start -->[\s\S]*<!-- results:end -->/;
// Only a whole run replaces the published results.
if (marked.test(readme) && SECTIONS.every((key) => only.has(key))) {
  writeFileSync(readmePath, readme.replace(marked, `<!-- results:start -->\n${markdown}\n<!-- results:end -->`));
}
console.log(markdown);
