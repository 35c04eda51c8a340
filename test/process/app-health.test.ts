// GET /app-health against the built binary (CONTRACT §17): the app's own health for a livenessProbe, answered while the one --max-concurrency slot is held, over HTTP/1.1 and h2, never in the access log; 502 when the app cannot answer.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t, { type Test } from "tap";
import { send } from "../helpers/http-client.js";
import { h2Connect, h2Request } from "../helpers/h2.js";
import { BUILT_ARTIFACTS, spawnDaemon } from "../helpers/spawn-daemon.js";
import { closedPort, deferred } from "../helpers/test-doubles.js";

const binary = BUILT_ARTIFACTS.find((artifact) => artifact.name === "binary")!;
const skip = !binary.built && "the binary is not built: run make build";

const LONG_BODY = "x".repeat(20 * 1024);

/** An app: /hold answers only when released (it holds the one slot), /livez 200, /sick 500, /long a 20 KiB body, /hang never; every path seen is recorded. */
async function startApp(t: Test) {
  const held: ServerResponse[] = [];
  const holding = deferred();
  const seen: string[] = [];
  const server = createServer((request, response) => {
    seen.push(request.url ?? "");
    switch (request.url) {
      case "/hold":
        held.push(response);
        holding.resolve();
        return;
      case "/livez":
        return void response.writeHead(200, { "content-type": "text/plain" }).end("app alive");
      case "/sick":
        return void response.writeHead(500, { "content-type": "application/json" }).end('{"sick":true}');
      case "/long":
        return void response.end(LONG_BODY);
      case "/hang":
        return;
      default:
        response.end(`app ${request.url}`);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return { port: (server.address() as AddressInfo).port, holding: holding.promise, release: () => held.forEach((response) => response.end("released")), seen };
}

t.test("answered while the one slot is held, over HTTP/1.1 and h2; the app's status and body; not queued, not logged", { skip }, async (t) => {
  const app = await startApp(t);
  const daemon = await spawnDaemon(t, binary.command, ["--upstream", `http://127.0.0.1:${app.port}`, "--app-health-path", "/livez", "--max-concurrency", "1", "--max-queue", "0", "--access-log"]);
  const holder = send(daemon.port, "/hold");
  await app.holding;
  t.equal((await send(daemon.port, "/other")).status, 503, "the one slot is held: a proxied request is refused");
  const health = await send(daemon.port, "/app-health");
  t.same([health.status, health.text(), health.headers["content-type"], health.headers["cache-control"]], [200, "app alive", "text/plain", "no-store"], "/app-health is not queued");
  const session = h2Connect(t, daemon.port);
  const overH2 = await h2Request(session, { ":path": "/app-health" });
  t.same([overH2.status, overH2.body.toString()], [200, "app alive"], "the same over h2");
  session.close();
  app.release();
  t.equal((await holder).text(), "released");
  t.equal(app.seen.filter((path) => path === "/livez").length, 2, "each request asked the app once");
  daemon.child.kill("SIGTERM");
  t.equal(await daemon.exited, 0);
  const logged = daemon.records.filter((record) => record.msg === "request").map((record) => record.path);
  t.notOk(logged.includes("/app-health"), `not in the access log: ${logged.join(", ")}`);
  t.ok(logged.includes("/hold"));
});

t.test("the default path is --readiness-upstream-path's; the app's failure status passes; 10 KiB at most; 502 when it cannot answer", { skip }, async (t) => {
  const app = await startApp(t);
  const sick = await spawnDaemon(t, binary.command, ["--upstream", `http://127.0.0.1:${app.port}/prefix`, "--readiness-upstream-path", "/sick"]);
  const answer = await send(sick.port, "/app-health");
  t.same([answer.status, answer.text(), answer.headers["content-type"]], [500, '{"sick":true}', "application/json"], "the app's status and body, without --upstream's prefix");
  t.equal((await send(sick.port, "/app-health?x=1", { method: "HEAD" })).status, 500, "HEAD and a query too");

  const long = await spawnDaemon(t, binary.command, ["--upstream", `http://127.0.0.1:${app.port}`, "--app-health-path", "/long"]);
  const cut = await send(long.port, "/app-health");
  t.same([cut.status, cut.body.length, cut.headers["content-length"]], [200, 10 * 1024, String(10 * 1024)], "at most 10 KiB of the body");

  const hung = await spawnDaemon(t, binary.command, ["--upstream", `http://127.0.0.1:${app.port}`, "--app-health-path", "/hang", "--readiness-upstream-timeout", "200ms"]);
  const late = await send(hung.port, "/app-health");
  t.same([late.status, late.json()], [502, { error: "app health unavailable" }], "no answer within --readiness-upstream-timeout");

  const refused = await spawnDaemon(t, binary.command, ["--upstream", `http://127.0.0.1:${await closedPort()}`], { env: { PATH: process.env.PATH, READINESS_PROXY_APP_HEALTH_PATH: "/livez" } });
  const none = await send(refused.port, "/app-health");
  t.same([none.status, none.json(), none.headers["content-type"]], [502, { error: "app health unavailable" }, "application/json"], "connection refused");
});

t.test("an app on a unix socket (--upstream unix:): asked on that socket", { skip }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "rp-app-health-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const socketPath = join(dir, "app.sock");
  const seen: string[] = [];
  const server = createServer((request, response) => {
    seen.push(request.url ?? "");
    response.writeHead(200, { "content-type": "text/plain" }).end("alive on the socket");
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  t.teardown(() => server.close());
  const daemon = await spawnDaemon(t, binary.command, ["--upstream", `unix:${socketPath}`, "--app-health-path", "/livez"]);
  const health = await send(daemon.port, "/app-health");
  t.same([health.status, health.text()], [200, "alive on the socket"]);
  t.same(seen, ["/livez"], "the app was asked at its health path");
});

t.test("without a path the route is off: /app-health is the app's", { skip }, async (t) => {
  const app = await startApp(t);
  const daemon = await spawnDaemon(t, binary.command, ["--upstream", `http://127.0.0.1:${app.port}`]);
  t.equal((await send(daemon.port, "/app-health")).text(), "app /app-health");
});
