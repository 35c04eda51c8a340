// A Job's end against the built binary (CONTRACT §17): POST /quitquitquit and `readiness-proxy stop`, --exit-zero-on-stop, --app-exit-notify, and the log level changed at run time.
import { readFileSync } from "node:fs";
import { createServer as createHttpServer, type IncomingMessage } from "node:http";
import { createServer as createNetServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import t, { type Test } from "tap";
import { send } from "../helpers/http-client.js";
import { BINARY, BUILT_ARTIFACTS, runToExit, spawnDaemon, type SpawnedDaemon } from "../helpers/spawn-daemon.js";
import { closedPort, deferred } from "../helpers/test-doubles.js";

const binary = BUILT_ARTIFACTS.find((artifact) => artifact.name === "binary")!;
const skip = !binary.built && "the binary is not built: run make build";

/** A python app that sleeps until it is signalled: Python's default for SIGTERM is to die of it (143). */
const SLEEPING_APP = ["/usr/bin/python3", "-c", "import time; time.sleep(600)"];

/** The binary as a command with the admin listener's address in its environment, as a container's env gives it. */
function command(adminPort: number, ...args: string[]) {
  return runToExit([BINARY, ...args], { PATH: process.env.PATH, READINESS_PROXY_ADMIN_LISTEN: `127.0.0.1:${adminPort}` });
}

const indexOf = (daemon: SpawnedDaemon, msg: string) => daemon.records.findIndex((record) => record.msg === msg);

/** A sidecar's shutdown endpoint that records every request it gets (method, path, body bytes) and answers `status`; `asked` resolves at the first. */
async function recordingSidecar(t: Test, status: number): Promise<{ url: string; seen: Array<{ method: string; path: string; bodyBytes: number }>; asked: Promise<void> }> {
  const seen: Array<{ method: string; path: string; bodyBytes: number }> = [];
  const asked = deferred();
  const server = createHttpServer((request: IncomingMessage, response) => {
    let bodyBytes = 0;
    request.on("data", (chunk: Buffer) => (bodyBytes += chunk.length));
    request.on("end", () => {
      seen.push({ method: request.method ?? "", path: request.url ?? "", bodyBytes });
      asked.resolve();
      response.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/quitquitquit`, seen, asked: asked.promise };
}

/** A sidecar that accepts and never answers; resolves `accepted` at its first connection. */
async function hangingSidecar(t: Test): Promise<{ url: string; accepted: Promise<void> }> {
  const sockets: Socket[] = [];
  let onAccept!: () => void;
  const accepted = new Promise<void>((resolve) => (onAccept = resolve));
  const server = createNetServer((socket) => {
    sockets.push(socket);
    onAccept();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/shutdown`, accepted };
}

t.test("POST /quitquitquit: 202, again the same, the whole shutdown, exit 0; `readiness-proxy stop` does the same", { skip }, async (t) => {
  const adminPort = await closedPort();
  const daemon = await spawnDaemon(t, binary.command, ["--upstream", `http://127.0.0.1:${await closedPort()}`, "--admin-listen", `127.0.0.1:${adminPort}`, "--shutdown-delay", "2s"]);
  const first = await send(adminPort, "/quitquitquit", { method: "POST" });
  t.same([first.status, first.json()], [202, { stopping: true }]);
  t.match(await daemon.waitForLog("draining"), { reason: "POST /quitquitquit", shutdownDelayMs: 2000 });
  const again = await send(adminPort, "/quitquitquit", { method: "POST" });
  t.same([again.status, again.json()], [202, { stopping: true }], "again: the same");
  const readyz = await send(daemon.port, "/readyz");
  t.same([readyz.status, readyz.json()], [503, { status: "not ready", draining: true, failedChecks: ["shutdown"] }], "the drain of a SIGTERM: serving through the delay");
  t.equal(await daemon.exited, 0);
  t.equal(daemon.records.filter((record) => record.msg === "draining").length, 1, "one shutdown");
  t.match(daemon.records.at(-1), { msg: "stopped" });

  const adminPort2 = await closedPort();
  const second = await spawnDaemon(t, binary.command, ["--admin-listen", `127.0.0.1:${adminPort2}`]);
  const stop = await command(adminPort2, "stop");
  t.same([stop.code, JSON.parse(stop.stdout)], [0, { stopping: true }], stop.stderr);
  t.equal(await second.exited, 0);
  t.match(second.records.find((record) => record.msg === "draining"), { reason: "POST /quitquitquit" });
});

t.test("entrypoint form: SIGTERM gives the app's 143, or 0 with --exit-zero-on-stop; /quitquitquit stops the app after the drain", { skip }, async (t) => {
  const base = ["--readiness-upstream-listener", "off", "--upstream", `http://127.0.0.1:${await closedPort()}`];
  for (const [args, code] of [
    [[], 143],
    [["--exit-zero-on-stop"], 0],
  ] as const) {
    const daemon = await spawnDaemon(t, binary.command, [...base, ...args, "--", ...SLEEPING_APP]);
    await daemon.waitForLog("app started");
    daemon.child.kill("SIGTERM");
    t.equal(await daemon.exited, code, `SIGTERM ${args.join(" ")}`);
    t.match(daemon.records.find((record) => record.msg === "app exited"), { signal: "SIGTERM" }, "the app's own end is in its line");
  }
  const byEnv = await spawnDaemon(t, binary.command, [...base, "--", ...SLEEPING_APP], { env: { PATH: process.env.PATH, READINESS_PROXY_EXIT_ZERO_ON_STOP: "true" } });
  await byEnv.waitForLog("app started");
  byEnv.child.kill("SIGINT");
  t.equal(await byEnv.exited, 0, "SIGINT, the switch from its variable");

  const adminPort = await closedPort();
  const daemon = await spawnDaemon(t, binary.command, [...base, "--exit-zero-on-stop", "--admin-listen", `127.0.0.1:${adminPort}`, "--", ...SLEEPING_APP]);
  await daemon.waitForLog("app started");
  const stop = await command(adminPort, "stop");
  t.equal(stop.code, 0, stop.stderr);
  t.equal(await daemon.exited, 0);
  const order = ["draining", "stopping app", "app exited", "stopped"].map((msg) => indexOf(daemon, msg));
  t.ok(order.every((index) => index >= 0), `every step logged: ${order.join(", ")}`);
  t.same([...order].sort((a, b) => a - b), order, "the app is stopped after the drain");
  t.match(daemon.records[indexOf(daemon, "stopping app")], { signal: "SIGTERM" });
  t.match(daemon.records[indexOf(daemon, "app exited")], { signal: "SIGTERM" });
});

t.test("an app that exits on its own: every --app-exit-notify URL gets one empty POST, at once, a hung one within 2 s; the exit is the app's code", { skip }, async (t) => {
  const istio = await recordingSidecar(t, 200);
  const linkerd = await recordingSidecar(t, 503);
  const hung = await hangingSidecar(t);
  const refused = `http://127.0.0.1:${await closedPort()}/quitquitquit`;
  const daemon = await spawnDaemon(t, binary.command, [
    "--readiness-upstream-listener",
    "off",
    "--exit-zero-on-stop",
    "--app-exit-notify",
    istio.url,
    "--app-exit-notify",
    hung.url,
    "--app-exit-notify",
    refused,
    "--app-exit-notify",
    linkerd.url,
    "--",
    "/usr/bin/python3",
    "-c",
    "import sys; sys.exit(3)",
  ]);
  t.equal(await daemon.exited, 3, "the app's own code, --exit-zero-on-stop or not");
  await hung.accepted;
  t.same(istio.seen, [{ method: "POST", path: "/quitquitquit", bodyBytes: 0 }], "one empty POST");
  t.same(linkerd.seen, [{ method: "POST", path: "/quitquitquit", bodyBytes: 0 }]);
  const line = daemon.records.find((record) => record.msg === "app exit notified");
  t.match(line, { level: 30 });
  t.same(line?.notified, [
    { url: istio.url, status: 200 },
    { url: hung.url, status: "error", reason: "timeout after 2s" },
    { url: refused, status: "error", reason: "connection refused" },
    { url: linkerd.url, status: 503 },
  ]);
  const readme = readFileSync(join(import.meta.dirname, "../../README.md"), "utf8");
  const example = JSON.parse(/^ *(\{"level":30,.*"msg":"app exit notified"\})$/m.exec(readme)?.[1] ?? "{}") as Record<string, unknown>;
  t.same(Object.keys(example), Object.keys(line ?? {}), "README's example line has the real line's fields, in its order");
  t.ok(indexOf(daemon, "app exited") < indexOf(daemon, "app exit notified"), "after the app's end");
  t.ok(indexOf(daemon, "app exit notified") < indexOf(daemon, "stopped"), "before the exit");
});

t.test("an app we stopped is not notified for", { skip }, async (t) => {
  const istio = await recordingSidecar(t, 200);
  const daemon = await spawnDaemon(t, binary.command, ["--readiness-upstream-listener", "off", "--app-exit-notify", istio.url, "--", ...SLEEPING_APP]);
  await daemon.waitForLog("app started");
  daemon.child.kill("SIGTERM");
  t.equal(await daemon.exited, 143);
  t.same(istio.seen, []);
  t.equal(indexOf(daemon, "app exit notified"), -1);
});

t.test("the log level at run time: PUT /log-level and `readiness-proxy log-level`, seen in the next lines", { skip }, async (t) => {
  const adminPort = await closedPort();
  const upstream = createHttpServer((_request, response) => response.end("app"));
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  t.teardown(() => upstream.close());
  const appPort = (upstream.address() as AddressInfo).port;
  const daemon = await spawnDaemon(t, binary.command, ["--upstream", `http://127.0.0.1:${appPort}`, "--admin-listen", `127.0.0.1:${adminPort}`, "--access-log"]);
  const accessLines = () => daemon.records.filter((record) => record.msg === "request").length;

  await send(daemon.port, "/one");
  await daemon.waitForLog("request");
  const toWarn = await command(adminPort, "log-level", "warn");
  t.same([toWarn.code, JSON.parse(toWarn.stdout)], [0, { level: "warn" }], toWarn.stderr);
  await send(daemon.port, "/two");
  const toInfo = await send(adminPort, "/log-level?level=info", { method: "PUT" });
  t.same([toInfo.status, toInfo.json()], [200, { level: "info" }]);
  await send(daemon.port, "/three");
  // Lines are written after the response ends: wait for the third, then count.
  await new Promise<void>((resolve) => {
    const poll = () => (daemon.records.some((record) => record.msg === "request" && record.path === "/three") ? resolve() : setTimeout(poll, 20));
    poll();
  });
  t.same(daemon.records.filter((record) => record.msg === "request").map((record) => record.path), ["/one", "/three"], "at warn no access line");
  t.equal(accessLines(), 2);

  const bad = await send(adminPort, "/log-level?level=loud", { method: "PUT" });
  t.same([bad.status, bad.json()], [400, { error: 'level: expected one of fatal, error, warn, info, debug, trace, got "loud"' }]);
  const none = await send(adminPort, "/log-level", { method: "PUT" });
  t.equal(none.status, 400);
  const badCommand = await command(adminPort, "log-level", "loud");
  t.same([badCommand.code, badCommand.stderr], [2, 'error: log-level: expected one of fatal, error, warn, info, debug, trace, got "loud"\n']);
  daemon.child.kill("SIGTERM");
  t.equal(await daemon.exited, 0);
});

t.test("debug at run time: a held-back 502's line appears at debug once the level is lowered", { skip }, async (t) => {
  const adminPort = await closedPort();
  const daemon = await spawnDaemon(t, binary.command, ["--upstream", `http://127.0.0.1:${await closedPort()}`, "--admin-listen", `127.0.0.1:${adminPort}`]);
  // The first 502 of a window is a warn line; the rest of the window goes to debug (not written at info).
  t.equal((await send(daemon.port, "/a")).status, 502);
  t.equal((await send(daemon.port, "/b")).status, 502);
  const toDebug = await command(adminPort, "log-level", "debug");
  t.same([toDebug.code, JSON.parse(toDebug.stdout)], [0, { level: "debug" }], toDebug.stderr);
  await daemon.waitForLog("log level set");
  t.equal(daemon.records.filter((record) => record.level === 20).length, 0, "nothing at debug before");
  t.equal((await send(daemon.port, "/c")).status, 502);
  const debugLine = await new Promise<Record<string, unknown>>((resolve) => {
    const poll = () => {
      const found = daemon.records.find((record) => record.level === 20);
      if (found) resolve(found);
      else setTimeout(poll, 20);
    };
    poll();
  });
  t.match(debugLine, { url: "/c", status: 502 }, "the next request's held-back line, at debug");
  daemon.child.kill("SIGTERM");
  t.equal(await daemon.exited, 0);
});

t.test("--app-exit-notify POSTs to every URL at once: a sidecar that answers only once the next one has its POST gets it", { skip }, async (t) => {
  const second = await recordingSidecar(t, 200);
  // The first answers only after the second was asked: one after the other, it would wait out its 2 s and fail.
  const first = createHttpServer((request, response) => {
    request.resume();
    void second.asked.then(() => response.writeHead(200).end());
  });
  await new Promise<void>((resolve) => first.listen(0, "127.0.0.1", resolve));
  t.teardown(() => {
    first.closeAllConnections();
    first.close();
  });
  const firstUrl = `http://127.0.0.1:${(first.address() as AddressInfo).port}/quitquitquit`;
  const daemon = await spawnDaemon(t, binary.command, ["--readiness-upstream-listener", "off", "--app-exit-notify", firstUrl, "--app-exit-notify", second.url, "--", "/usr/bin/python3", "-c", "pass"]);
  t.equal(await daemon.exited, 0);
  t.same(daemon.records.find((record) => record.msg === "app exit notified")?.notified, [
    { url: firstUrl, status: 200 },
    { url: second.url, status: 200 },
  ]);
});
