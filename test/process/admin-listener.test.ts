// The admin listener and its commands against the built binary (CONTRACT §14): maintenance in every surface, POST /drain without a stop, status, the refusals.
import { execFile } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import t, { type Test } from "tap";
import { send } from "../helpers/http-client.js";
import { h2Connect, h2Request } from "../helpers/h2.js";
import { grpcMissing } from "../helpers/grpc-peer.js";
import { scrapeText, seriesValue } from "../helpers/scrape.js";
import { BINARY, BUILT_ARTIFACTS, runToExit, spawnDaemon } from "../helpers/spawn-daemon.js";
import { closedPort } from "../helpers/test-doubles.js";

const binary = BUILT_ARTIFACTS.find((artifact) => artifact.name === "binary")!;
const skip = !binary.built && "the binary is not built: run make build";

/** An upstream that answers every request with its method and path. */
async function startUpstream(t: Test): Promise<number> {
  const server: Server = createServer((req, res) => res.end(`app ${req.method} ${req.url}`));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return (server.address() as AddressInfo).port;
}

/** The binary as a command, with the admin listener's address in its environment (as a container's env gives it). */
function command(adminPort: number, ...args: string[]) {
  return runToExit([BINARY, ...args], { PATH: process.env.PATH, READINESS_PROXY_ADMIN_LISTEN: `127.0.0.1:${adminPort}` });
}

/** grpc.health.v1 Check of `service` through the proxy, by python3-grpcio: `status SERVING` and the like. */
function grpcCheck(port: number, service: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile("/usr/bin/python3", [join(import.meta.dirname, "../helpers/grpc-client.py"), "check", `127.0.0.1:${port}`, service], { timeout: 20_000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${error.message} ${stderr}`)) : resolve(stdout.trim()),
    );
  });
}

t.test("maintenance: on, off and expiry through the listener and the binary; shown in every surface", { skip }, async (t) => {
  const upstreamPort = await startUpstream(t);
  const adminPort = await closedPort();
  const metricsPort = await closedPort();
  const daemon = await spawnDaemon(t, binary.command, ["--upstream", `http://127.0.0.1:${upstreamPort}`, "--admin-listen", `127.0.0.1:${adminPort}`, "--metrics-listen", `127.0.0.1:${metricsPort}`, "--readiness-cache-ttl", "100ms"]);
  const grpc = await grpcMissing();

  t.equal((await send(daemon.port, "/readyz")).status, 200);
  t.equal((await send(daemon.port, "/readyz?verbose")).text(), "[+]maintenance ok\n[+]shutdown ok\nreadyz check passed\n", "first in check order");

  const on = await command(adminPort, "maintenance", "on");
  t.equal(on.code, 0, on.stderr);
  t.same(JSON.parse(on.stdout), { maintenance: true, until: null });
  t.match(await daemon.waitForLog("maintenance on"), { level: 40, until: null });
  const readyz = await send(daemon.port, "/readyz");
  t.equal(readyz.status, 503);
  t.same(readyz.json(), { status: "not ready", failedChecks: ["maintenance"] });
  t.equal((await send(daemon.port, "/readyz?verbose")).text(), "[-]maintenance failed: maintenance\n[+]shutdown ok\nreadyz check failed\n");
  const single = await send(daemon.port, "/readyz/maintenance");
  t.same([single.status, single.text()], [503, "maintenance failed: maintenance\n"]);
  t.equal((await send(daemon.port, "/readyz?exclude=maintenance")).status, 200, "excludable like any check");
  t.equal(seriesValue(await scrapeText(metricsPort), 'readiness_proxy_check_ok{check="maintenance"}'), 0);
  t.equal(seriesValue(await scrapeText(metricsPort), "readiness_proxy_ready"), 0);
  if (grpc) t.comment(`gRPC health not checked: ${grpc}`);
  else {
    t.equal(await grpcCheck(daemon.port, "maintenance"), "status NOT_SERVING", "the gRPC health service named maintenance");
    t.equal(await grpcCheck(daemon.port, "-"), "status NOT_SERVING", "and the whole server");
  }
  const status = await command(adminPort, "status");
  t.equal(status.code, 0, status.stderr);
  t.match(JSON.parse(status.stdout), { ready: false, draining: false, maintenance: true, maintenanceUntil: null, checks: [{ name: "maintenance", ok: false, reason: "maintenance" }, { name: "shutdown", ok: true }], requestsInFlight: 0 });

  const off = await command(adminPort, "maintenance", "off");
  t.equal(off.code, 0, off.stderr);
  t.same(JSON.parse(off.stdout), { maintenance: false });
  t.match(await daemon.waitForLog("maintenance off"), { level: 30, reason: "deleted" });
  t.equal((await send(daemon.port, "/readyz")).status, 200);
  t.equal((await send(daemon.port, "/readyz/maintenance")).text(), "ok");
  t.equal(seriesValue(await scrapeText(metricsPort), 'readiness_proxy_check_ok{check="maintenance"}'), 1);
  if (!grpc) t.equal(await grpcCheck(daemon.port, "maintenance"), "status SERVING");

  // Through HTTP, with an expiry: it ends by itself.
  const timed = await send(adminPort, "/maintenance?for=300ms", { method: "POST" });
  t.equal(timed.status, 200);
  const body = timed.json() as { maintenance: boolean; until: string };
  t.equal(body.maintenance, true);
  t.ok(Date.parse(body.until) > Date.now() - 1000, `until is an ISO time: ${body.until}`);
  t.equal((await send(daemon.port, "/readyz")).status, 503);
  const expired = await new Promise<Record<string, unknown>>((resolve) => {
    const poll = () => {
      const found = daemon.records.find((record) => record.msg === "maintenance off" && record.reason === "expired");
      if (found) resolve(found);
      else setTimeout(poll, 50);
    };
    poll();
  });
  t.match(expired, { reason: "expired" });
  t.equal((await send(daemon.port, "/readyz")).status, 200, "ready again once it expired");
  const timedByBinary = await command(adminPort, "maintenance", "on", "--for", "10m");
  t.equal(timedByBinary.code, 0, timedByBinary.stderr);
  t.match(JSON.parse(timedByBinary.stdout), { maintenance: true, until: String });

  // The listener's refusals.
  const badFor = await send(adminPort, "/maintenance?for=soon", { method: "POST" });
  t.same([badFor.status, badFor.json()], [400, { error: 'for: expected a duration above 0 and at most 576h, like 30s or 10m, got "soon"' }]);
  // Past a timer's 2^31 ms node would fire the expiry at once: refused rather than ended early.
  const tooLong = await send(adminPort, "/maintenance?for=1000h", { method: "POST" });
  t.same([tooLong.status, tooLong.json()], [400, { error: 'for: expected a duration above 0 and at most 576h, like 30s or 10m, got "1000h"' }]);
  for (const [method, path] of [["GET", "/drain"], ["GET", "/"], ["POST", "/status"], ["PUT", "/maintenance"]] as const) {
    const reply = await send(adminPort, path, { method });
    t.same([reply.status, reply.json()], [404, { error: "not found" }], `${method} ${path}`);
  }
  t.equal(daemon.records.filter((record) => record.msg === "draining").length, 0, "nothing of it drained");
  daemon.child.kill("SIGTERM");
  t.equal(await daemon.exited, 0);
});

t.test("POST /drain: draining without a stop; a later SIGTERM does not wait the delay again; the main listener's POST /drain is the app's", { skip }, async (t) => {
  const upstreamPort = await startUpstream(t);
  const adminPort = await closedPort();
  const daemon = await spawnDaemon(t, binary.command, ["--upstream", `http://127.0.0.1:${upstreamPort}`, "--admin-listen", `127.0.0.1:${adminPort}`, "--shutdown-delay", "1s", "--access-log"]);
  // Security: only the admin listener can start a drain.
  const outside = await send(daemon.port, "/drain", { method: "POST" });
  t.same([outside.status, outside.text()], [200, "app POST /drain"], "POST /drain on the main listener goes to the app");
  t.equal((await send(daemon.port, "/readyz")).status, 200);

  const session = h2Connect(t, daemon.port);
  t.equal((await h2Request(session, { ":path": "/healthz" })).status, 200, "an h2 client connected before the drain");
  const goaway = new Promise<number>((resolve) => session.once("goaway", () => resolve(Date.now())));

  const drainedAt = Date.now();
  const drain = await command(adminPort, "drain");
  t.equal(drain.code, 0, drain.stderr);
  t.same(JSON.parse(drain.stdout), { draining: true });
  t.match(await daemon.waitForLog("draining"), { reason: "POST /drain", shutdownDelayMs: 1000 });
  // Over HTTP/2 too (one implementation for both protocols): a stream opened before the GOAWAY finishes with its answer.
  const h2Waited = h2Request(session, { ":path": "/wait-for-drain" });
  const again = await send(adminPort, "/drain", { method: "POST" });
  t.same([again.status, again.json()], [202, { draining: true }], "again: the same");
  const readyz = await send(daemon.port, "/readyz");
  t.same([readyz.status, readyz.json()], [503, { status: "not ready", draining: true, failedChecks: ["shutdown"] }]);
  const late = await send(daemon.port, "/late");
  t.same([late.status, late.text(), late.headers.connection], [200, "app GET /late", "close"], "late requests still served, with Connection: close");

  t.ok((await goaway) - drainedAt >= 900, "HTTP/2 clients get GOAWAY after the delay");
  const h2Answer = await h2Waited;
  t.same([h2Answer.status, JSON.parse(h2Answer.body.toString())], [200, { drained: true }], "/wait-for-drain over HTTP/2");
  const waited = await send(daemon.port, "/wait-for-drain");
  t.same([waited.status, waited.json()], [200, { drained: true }]);
  t.equal(daemon.child.exitCode, null, "the process does not exit");
  t.equal((await send(daemon.port, "/healthz")).status, 200, "the listener stays open");
  const status = await command(adminPort, "status");
  t.match(JSON.parse(status.stdout), { ready: false, draining: true });

  const signalledAt = Date.now();
  daemon.child.kill("SIGTERM");
  t.equal(await daemon.exited, 0);
  t.ok(Date.now() - signalledAt < 1000, "SIGTERM finished the shutdown without a second delay");
  t.equal(daemon.records.filter((record) => record.msg === "draining").length, 1, "draining logged once");
  const accessPaths = daemon.records.filter((record) => record.msg === "request").map((record) => record.path);
  t.ok(accessPaths.includes("/late"), "proxied requests are in the access log");
  t.notOk(accessPaths.includes("/wait-for-drain"), "/wait-for-drain is a health path: not in the access log");
  t.match(daemon.records.at(-1), { msg: "stopped" });
});

t.test("the commands: refused connection, usage errors, --help", { skip }, async (t) => {
  const port = await closedPort();
  const refused = await command(port, "status");
  t.same([refused.code, refused.stdout, refused.stderr], [1, "", `error: no admin listener at 127.0.0.1:${port}: connection refused\n`]);
  const byFlag = await runToExit([BINARY, "drain", "--admin-listen", `127.0.0.1:${port}`]);
  t.same([byFlag.code, byFlag.stderr], [1, `error: no admin listener at 127.0.0.1:${port}: connection refused\n`], "the flag works as the env does");
  const cases: Array<[string[], string]> = [
    [["drain"], "error: --admin-listen: expected the admin listener's address (the flag or READINESS_PROXY_ADMIN_LISTEN), like 127.0.0.1:9901\n"],
    [["maintenance", "--admin-listen", "127.0.0.1:1"], 'error: maintenance: expected on or off, got ""\n'],
    [["maintenance", "sideways", "--admin-listen", "127.0.0.1:1"], 'error: maintenance: expected on or off, got "sideways"\n'],
    [["maintenance", "on", "--for", "5", "--admin-listen", "127.0.0.1:1"], 'error: --for: expected a duration like 500ms, 1s or 1m30s, got "5"\n'],
    [["maintenance", "off", "--for", "5s", "--admin-listen", "127.0.0.1:1"], 'error: --for: expected only with maintenance on, got "5s"\n'],
    [["maintenance", "on", "--for", "0s", "--admin-listen", "127.0.0.1:1"], 'error: --for: expected a duration above 0 and at most 576h, like 30s or 10m, got "0s"\n'],
    [["status", "--verbose", "--admin-listen", "127.0.0.1:1"], "error: unknown option '--verbose'\n"],
    [["drain", "now", "--admin-listen", "127.0.0.1:1"], 'error: readiness-proxy: expected drain, stop, maintenance on|off, log-level <level> or status, got "drain now"\n'],
    [["drain", "--admin-listen", "0.0.0.0:9901"], 'error: --admin-listen: expected a loopback address (127.0.0.0/8, [::1] or localhost), got "0.0.0.0:9901"\n'],
  ];
  for (const [argv, line] of cases) {
    const run = await runToExit([BINARY, ...argv]);
    t.same([run.code, run.stdout, run.stderr], [2, "", line], argv.join(" "));
  }
  const help = await runToExit([BINARY, "maintenance", "--help"]);
  t.equal(help.code, 0);
  t.match(help.stdout, /readiness-proxy maintenance on \[--for <duration>\]/);
  const mainHelp = await runToExit([BINARY, "--help"]);
  for (const flag of ["--app-start-wait <duration>", "--app-start-wait-fatal", "--app-stop-signal <signal>", "--admin-listen <host:port>", "readiness-proxy drain"]) t.match(mainHelp.stdout, flag);
});

t.test("the admin listener refuses a non-loopback address at start: exit 2, nothing listens", { skip }, async (t) => {
  const run = await runToExit([BINARY, "--listen", "127.0.0.1:0", "--admin-listen", "0.0.0.0:9901"]);
  t.same([run.code, run.stdout, run.stderr], [2, "", 'error: --admin-listen: expected a loopback address (127.0.0.0/8, [::1] or localhost), got "0.0.0.0:9901"\n']);
  // A pod IP: any address of this host that is not loopback.
  const { networkInterfaces } = await import("node:os");
  const podIp = Object.values(networkInterfaces()).flat().find((entry) => entry && entry.family === "IPv4" && !entry.internal)?.address;
  if (podIp === undefined) t.comment("no non-loopback IPv4 address here: the pod IP case is the 10.1.2.3 row of test/config/lifecycle-options.test.ts");
  else {
    const byIp = await runToExit([BINARY, "--listen", "127.0.0.1:0", "--admin-listen", `${podIp}:9901`]);
    t.equal(byIp.code, 2, byIp.stderr);
  }
});
