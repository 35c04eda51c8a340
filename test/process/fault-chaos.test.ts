// Issue 27.1 from outside: faults injected at random in 1% of the relay's callbacks under mixed load keep the process up, never give one client another's answer, and leave FDs as they were; the shipped builds cannot be armed.
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { createServer, request, Agent } from "node:http";
import { join } from "node:path";
import type { Socket } from "node:net";
import t, { type Test } from "tap";
import { send } from "../helpers/http-client.js";
import { BUILT_ARTIFACTS, spawnDaemon } from "../helpers/spawn-daemon.js";
import { serveOnLoopback } from "../helpers/upstream.js";
import { scrapeText, seriesValue } from "../helpers/scrape.js";

const FAULTS_BUNDLE = join(import.meta.dirname, "../../dist/readiness-proxy-faults.cjs");
const SECONDS = Number(process.env.CHAOS_SECONDS ?? 30);
const WORKERS = 8;

const fdCount = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;
const rssAnonMb = (pid: number) => Number(/RssAnon:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;

/** An app with one answer per kind of traffic, each body naming its request, so a misdelivered answer shows. */
async function mixedApp(t: Test) {
  const server = createServer((req, res) => {
    const id = req.headers["x-chaos-id"] ?? "";
    if (req.url?.startsWith("/stream")) {
      res.writeHead(200, { "content-type": "text/event-stream" });
      let sent = 0;
      const timer = setInterval(() => {
        res.write(`data: ${id} ${sent}\n\n`);
        if (++sent === 3) {
          clearInterval(timer);
          res.end();
        }
      }, 2);
      res.on("close", () => clearInterval(timer));
      return;
    }
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => res.end(`${id}:${Buffer.concat(chunks).length}`));
  });
  server.on("upgrade", (_req, socket: Socket) => {
    socket.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
    socket.on("error", () => {});
    socket.pipe(socket);
  });
  const port = await serveOnLoopback(t, server);
  return `http://127.0.0.1:${port}`;
}

type Result = "ok" | "failed" | "wrong";

/** One request of the kind `n` picks, on its own connection or a kept-alive one; "wrong" is an answer that is not this request's. */
function oneRequest(port: number, n: number, agent: Agent): Promise<Result> {
  const id = `r${n}`;
  const kind = n % 4;
  const body = kind === 1 ? Buffer.alloc(1000 + (n % 5000), 97) : undefined;
  const path = kind === 2 ? `/stream/${id}` : `/${id}`;
  return new Promise((resolve) => {
    const req = request(
      { host: "127.0.0.1", port, path, method: body ? "POST" : "GET", headers: { "x-chaos-id": id }, agent: kind === 3 ? agent : false, timeout: 10_000 },
      (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => (text += chunk.toString()));
        res.on("error", () => resolve("failed"));
        res.on("aborted", () => resolve("failed"));
        res.on("end", () => {
          if (!res.complete || res.statusCode !== 200) return resolve("failed");
          const expected = kind === 2 ? `data: ${id} 0\n\ndata: ${id} 1\n\ndata: ${id} 2\n\n` : `${id}:${body?.length ?? 0}`;
          resolve(text === expected ? "ok" : "wrong");
        });
      },
    );
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve("failed"));
    req.end(body);
  });
}

t.test(`faults in 1% of callbacks for ${SECONDS} s of mixed load: the process stays up, no answer goes astray, FDs settle`, { skip: !existsSync(FAULTS_BUNDLE) && "dist/readiness-proxy-faults.cjs is not built: run make test" }, async (t) => {
  const upstream = await mixedApp(t);
  const daemon = await spawnDaemon(t, [process.execPath, FAULTS_BUNDLE], ["--upstream", upstream, "--max-concurrency", "16", "--metrics-listen", "127.0.0.1:0"], {
    env: { PATH: process.env.PATH, READINESS_PROXY_TEST_FAULTS: "0.01" },
  });
  const metricsPort = Number(/:(\d+)$/.exec(String((await daemon.waitForLog("metrics listening")).listen))?.[1]);
  t.ok(daemon.records.some((record) => record.msg === "fault injection armed (a test build)"), "armed");
  const pid = daemon.child.pid!;
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  t.teardown(() => agent.destroy());
  // Warm: the baseline is taken with the code paths loaded and the heap grown once.
  let n = 0;
  for (let index = 0; index < 200; index++) await oneRequest(daemon.port, n++, agent);
  const baseline = { fds: fdCount(pid), rssMb: rssAnonMb(pid) };
  const counts: Record<Result, number> = { ok: 0, failed: 0, wrong: 0 };
  const until = performance.now() + SECONDS * 1000;
  // Bounded by time and by count (a million requests would be far beyond this machine in SECONDS).
  await Promise.all(
    Array.from({ length: WORKERS }, async () => {
      while (performance.now() < until && n < 1_000_000) counts[await oneRequest(daemon.port, n++, agent)]++;
    }),
  );
  agent.destroy();
  t.equal(daemon.child.exitCode, null, "the process is still up");
  const faults = seriesValue(await scrapeText(metricsPort), "readiness_proxy_internal_errors_total") ?? 0;
  t.comment(`${counts.ok} answered, ${counts.failed} failed, ${counts.wrong} wrong, ${faults} faults injected and contained`);
  t.ok(faults > 0, "faults were injected");
  t.equal(counts.wrong, 0, "no client ever got an answer that was not its own");
  // Each fault ends at most the request on its connection (keep-alive ones included: one at a time).
  t.ok(counts.failed <= faults, `failures (${counts.failed}) are no more than the faults (${faults})`);
  t.ok(counts.ok > counts.failed * 10, "almost every request was answered");
  // Settled: bounded wait for the sockets of cut requests to go (the sweep closes some a second later).
  let settled = { fds: fdCount(pid), rssMb: rssAnonMb(pid) };
  for (let round = 0; round < 50 && settled.fds > baseline.fds; round++) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    settled = { fds: fdCount(pid), rssMb: rssAnonMb(pid) };
  }
  t.comment(`FDs ${baseline.fds} -> ${settled.fds}, RssAnon ${baseline.rssMb.toFixed(1)} -> ${settled.rssMb.toFixed(1)} MB`);
  t.ok(settled.fds <= baseline.fds, "FDs back to the baseline");
  // RssAnon is reported, not asserted: memory that stays up after load is issue 27's open part.
  const metrics = await scrapeText(metricsPort);
  t.equal(seriesValue(metrics, "readiness_proxy_requests_in_flight"), 0, "nothing left in flight");
  // Still armed: one /health may itself be hit, so five tries (all five hit: about one in 10^6).
  let healthy = 0;
  for (let attempt = 0; attempt < 5 && healthy === 0; attempt++) healthy = await send(daemon.port, "/health").then((reply) => reply.status, () => 0);
  t.equal(healthy, 200, "and it serves");
});

t.test("READINESS_PROXY_TEST_FAULTS arms nothing in the shipped bundle and binary, and arms the test build", async (t) => {
  const upstream = await mixedApp(t);
  const env = { PATH: process.env.PATH, READINESS_PROXY_TEST_FAULTS: "head parsed@1" };
  const builds = [...BUILT_ARTIFACTS.map((artifact) => ({ ...artifact, shipped: true })), { name: "test build", command: [process.execPath, FAULTS_BUNDLE], built: existsSync(FAULTS_BUNDLE), shipped: false }];
  for (const build of builds) {
    if (!build.built) {
      t.comment(`${build.name} is not built: skipped`);
      continue;
    }
    const daemon = await spawnDaemon(t, build.command, ["--upstream", upstream], { env });
    const status = (await send(daemon.port, "/x")).status;
    const armed = daemon.records.some((record) => record.msg === "fault injection armed (a test build)");
    if (build.shipped) {
      t.equal(status, 200, `${build.name}: the first request is answered by the app`);
      t.notOk(armed, `${build.name}: nothing armed`);
    } else {
      t.equal(status, 502, `${build.name}: the injected fault is contained to a 502`);
      t.ok(armed, `${build.name}: armed, and says so`);
    }
    daemon.child.kill("SIGTERM");
    t.equal(await daemon.exited, 0, `${build.name}: exits 0`);
  }
});
