// The single executable itself: embedded runtime, flag wiring, the bind-without-listen check, an empty environment, start-up time.
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, readSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t from "tap";
import { send } from "../helpers/http-client.js";
import { hasPython, holdPort } from "../helpers/port-holder.js";
import { BINARY, BUILT_ARTIFACTS, inspectorPortAccepts, runToExit, spawnDaemon } from "../helpers/spawn-daemon.js";
import { startUpstream } from "../helpers/upstream.js";

const binary = BUILT_ARTIFACTS.find((artifact) => artifact.name === "binary")!;
const embeddedVersion = (
  JSON.parse(readFileSync(join(import.meta.dirname, `../../node_modules/node-linux-${process.arch}/package.json`), "utf8")) as { version: string }
).version;

t.test("the single binary", { skip: !binary.built && "dist/readiness-proxy is not built: run make build" }, async (t) => {
  t.test("is one ELF executable embedding the pinned LTS runtime", async (t) => {
    const header = Buffer.alloc(4);
    const fd = openSync(BINARY, "r");
    readSync(fd, header, 0, 4, 0);
    closeSync(fd);
    t.same(header, Buffer.from([0x7f, 0x45, 0x4c, 0x46]), "ELF magic");
    const version = await runToExit([BINARY, "--version"], {});
    t.equal(version.code, 0);
    t.equal(version.stdout, `readiness-proxy 0.1.0 (node v${embeddedVersion}, linux-${process.arch})\n`);
    t.equal(Number(embeddedVersion.split(".")[0]) % 2, 0, "an even-numbered (LTS) major");
    t.comment(`binary: ${(statSync(BINARY).size / 1e6).toFixed(1)} MB, node v${embeddedVersion}`);
  });

  t.test("flag wiring: both spellings, and a bad port is exit 2", async (t) => {
    const bad = await runToExit([BINARY, "--readiness-required-listener=65536"]);
    t.equal(bad.code, 2);
    t.equal(bad.stderr, 'error: --readiness-required-listener: expected a port 1..65535, got "65536"\n');
    const daemon = await spawnDaemon(t, binary.command, [
      "--proc-root",
      join(import.meta.dirname, "../../proc-fixtures/header-only"),
      "--readiness-required-listener",
      "15008",
      "--readiness-required-listener=8443",
    ]);
    t.equal((await send(daemon.port, "/readyz")).text(), '{"status":"not ready","missingListeners":[8443,15008],"failedChecks":["listener-8443","listener-15008"]}');
    t.same(daemon.records[0]?.requiredListeners, [8443, 15008]);
    t.match(daemon.records[0], { msg: "listening", version: "0.1.0", runtime: `v${embeddedVersion}`, arch: `linux-${process.arch}` }, "the listening line names the build");
  });

  t.test("a reserved port: 503 while bound only, 200 once it listens on that same socket", { skip: (process.platform !== "linux" && "needs /proc/net") || (!hasPython() && "needs python3 to bind without listening") }, async (t) => {
    const holder = await holdPort(t, { family: 4 });
    const daemon = await spawnDaemon(t, binary.command, ["--readiness-required-listener", String(holder.port), "--readiness-cache-ttl", "0s"]);
    const before = await send(daemon.port, "/readyz");
    t.equal(before.status, 503);
    t.same(before.json(), { status: "not ready", missingListeners: [holder.port], failedChecks: [`listener-${holder.port}`] });
    await holder.listen();
    const after = await send(daemon.port, "/readyz");
    t.equal(after.status, 200);
    t.equal(after.text(), '{"status":"ready"}');
  });

  t.test("no readable socket tables: fail open with the table warning", async (t) => {
    // On Linux this stands in for a system without /proc/net: tcp is missing (unreadable), and a
    // missing tcp6 is an empty table by the contract, so one warning, for tcp.
    const procRoot = process.platform === "linux" ? mkdtempSync(join(tmpdir(), "rp-noproc-")) : "/proc";
    const daemon = await spawnDaemon(t, binary.command, ["--proc-root", procRoot, "--readiness-required-listener", "15008"]);
    const reply = await send(daemon.port, "/readyz");
    t.equal(reply.status, 200);
    t.equal(reply.text(), '{"status":"ready"}');
    const warning = await daemon.waitForLog("cannot read TCP socket table");
    t.match(warning, { level: 40, table: "tcp", err: /ENOENT/ });
    t.match(await daemon.waitForLog("required listeners not enforced; reporting ready"), { ports: [15008], unreadableTables: ["tcp"] });
  });

  t.test("runs with an empty environment: no node on PATH", async (t) => {
    const upstream = await startUpstream(t);
    upstream.handle((_req, res) => res.end("from upstream"));
    const daemon = await spawnDaemon(t, binary.command, ["--upstream", upstream.url], { env: {} });
    t.equal((await send(daemon.port, "/health")).text(), '{"status":"ok"}');
    t.equal((await send(daemon.port, "/v1/models")).text(), "from upstream");
  });

  t.test("SIGUSR1 never opens the inspector, and the proxy keeps serving", async (t) => {
    const daemon = await spawnDaemon(t, binary.command, []);
    t.equal(await inspectorPortAccepts(), false, "nothing on 9229 before");
    daemon.child.kill("SIGUSR1");
    // The signal is handled before the next request is read; /health proves the process is alive.
    t.equal((await send(daemon.port, "/health")).status, 200, "still serving after SIGUSR1");
    t.equal(await inspectorPortAccepts(), false, "9229 stays closed");
    t.notMatch(daemon.stderr(), /Debugger listening/);
  });

  t.test("NODE_OPTIONS meant for an app does not change the proxy's runtime (--require, --inspect)", async (t) => {
    const dir = mkdtempSync(join(tmpdir(), "rp-node-options-"));
    const marker = join(dir, "required-ran");
    const script = join(dir, "inject.cjs");
    writeFileSync(script, `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "ran");\n`);
    const env = { PATH: process.env.PATH, NODE_OPTIONS: `--require ${script} --inspect=127.0.0.1:9229` };
    const version = await runToExit([BINARY, "--version"], env);
    t.equal(version.code, 0);
    t.equal(existsSync(marker), false, "--require from NODE_OPTIONS did not run");
    const daemon = await spawnDaemon(t, binary.command, [], { env });
    t.equal((await send(daemon.port, "/health")).status, 200);
    t.equal(await inspectorPortAccepts(), false, "--inspect from NODE_OPTIONS did not open 9229");
    t.equal(existsSync(marker), false);
  });

  t.test("serves Prometheus metrics on --metrics-listen; an address in use is exit 1 with one line", async (t) => {
    const upstream = await startUpstream(t);
    const daemon = await spawnDaemon(t, binary.command, ["--upstream", upstream.url, "--metrics-listen", "127.0.0.1:0"]);
    const metricsPort = Number(/:(\d+)$/.exec(String((await daemon.waitForLog("metrics listening")).listen))?.[1]);
    await send(daemon.port, "/v1/models");
    const scrape = (await send(metricsPort, "/metrics")).text();
    t.match(scrape, /^readiness_proxy_requests_total\{code="200",method="GET"\} 1$/m);
    t.match(scrape, new RegExp(`^readiness_proxy_build_info\\{version="0\\.1\\.0",node_version="v${embeddedVersion.replace(/\./g, "\\.")}"\\} 1$`, "m"));
    const busy = await runToExit([BINARY, "--listen", "127.0.0.1:0", "--metrics-listen", `127.0.0.1:${metricsPort}`]);
    t.equal(busy.code, 1);
    t.equal(busy.stderr, `error: cannot listen on 127.0.0.1:${metricsPort} (--metrics-listen): address already in use\n`);
  });

  t.test("start-up time (printed, not asserted: see bench/)", async (t) => {
    const timings: number[] = [];
    for (let run = 0; run < 3; run++) {
      const started = performance.now();
      const daemon = await spawnDaemon(t, binary.command, []);
      const health = await send(daemon.port, "/health");
      timings.push(performance.now() - started);
      t.equal(health.status, 200);
      daemon.child.kill("SIGTERM");
      t.equal(await daemon.exited, 0);
    }
    t.comment(`exec to first /health 200: ${timings.map((ms) => `${ms.toFixed(0)} ms`).join(", ")}`);
  });
});

