// --upstream unix:<path>: an app on a unix socket through HTTP/1.1 and h2c, the client's Host kept; the entrypoint form's listener-unix-<basename> check; a relative path refused.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { createServer as createH2Server } from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t, { type Test } from "tap";
import { send } from "../helpers/http-client.js";
import { BINARY, runToExit, spawnDaemon } from "../helpers/spawn-daemon.js";

function tempDir(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), "rp-unix-up-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test("HTTP/1.1 to an app on a unix socket, in both spellings", async (t) => {
  const dir = tempDir(t);
  const socketPath = join(dir, "app.sock");
  const app = createServer((req, res) => res.end(`app saw ${req.method} ${req.url} host=${req.headers.host}`));
  await new Promise<void>((resolve) => app.listen(socketPath, resolve));
  t.teardown(() => app.close());
  for (const upstream of [`unix:${socketPath}`, `unix://${socketPath}`]) {
    const daemon = await spawnDaemon(t, [BINARY], ["--upstream", upstream]);
    const reply = await send(daemon.port, "/hello?x=1", { headers: { host: "shop.example" } });
    t.equal(reply.status, 200, upstream);
    t.equal(reply.text(), "app saw GET /hello?x=1 host=shop.example", "the client's Host goes through");
    daemon.child.kill("SIGKILL");
  }
});

t.test("h2c to an app on a unix socket", async (t) => {
  const dir = tempDir(t);
  const socketPath = join(dir, "grpc.sock");
  const app = createH2Server((req, res) => res.end(`h2c app saw ${req.url} authority=${req.headers[":authority"]}`));
  await new Promise<void>((resolve) => app.listen(socketPath, resolve));
  t.teardown(() => app.close());
  const daemon = await spawnDaemon(t, [BINARY], ["--upstream", `unix:${socketPath}`, "--upstream-protocol", "h2c"]);
  const reply = await send(daemon.port, "/over-h2c", { headers: { host: "api.example" } });
  t.equal(reply.status, 200);
  t.equal(reply.text(), "h2c app saw /over-h2c authority=api.example");
});

t.test("the upstream check asks the app over its socket", async (t) => {
  const dir = tempDir(t);
  const socketPath = join(dir, "app.sock");
  let status = 503;
  const app = createServer((req, res) => {
    res.statusCode = req.url === "/healthz" ? status : 404;
    res.end();
  });
  await new Promise<void>((resolve) => app.listen(socketPath, resolve));
  t.teardown(() => app.close());
  const daemon = await spawnDaemon(t, [BINARY], ["--upstream", `unix:${socketPath}`, "--readiness-upstream-path", "/healthz", "--readiness-cache-ttl", "0s"]);
  t.match((await send(daemon.port, "/readyz?verbose")).text(), /\[-\]upstream failed: status 503/);
  status = 200;
  t.equal((await send(daemon.port, "/readyz")).status, 200);
});

t.test("the entrypoint form requires the app's socket: listener-unix-<basename>", async (t) => {
  const dir = tempDir(t);
  const socketPath = join(dir, "Fpm.Sock");
  // The app listens only when told (a line on its stdin would need a pipe through the proxy): after a file appears.
  const trigger = join(dir, "go");
  const appCode = `const fs = require("node:fs"); const http = require("node:http");
    const wait = () => fs.existsSync(${JSON.stringify(trigger)}) ? http.createServer((q, s) => s.end("ok")).listen(${JSON.stringify(socketPath)}) : setTimeout(wait, 10); wait();`;
  const daemon = await spawnDaemon(t, [BINARY], ["--upstream", `unix:${socketPath}`, "--readiness-cache-ttl", "0s", "--", process.execPath, "-e", appCode]);
  const before = await send(daemon.port, "/readyz");
  t.same(before.json(), { status: "not ready", missingListeners: [`unix:${socketPath}`], failedChecks: ["listener-unix-fpm-sock"] });
  writeFileSync(trigger, "");
  // Held until the socket listens (the wait's own re-runs see it), then 200.
  t.equal((await send(daemon.port, "/readyz?wait=20s")).status, 200);
  t.equal((await send(daemon.port, "/")).text(), "ok");
  daemon.child.kill("SIGTERM");
  await daemon.exited;
  const off = await spawnDaemon(t, [BINARY], ["--upstream", `unix:${join(dir, "none.sock")}`, "--readiness-upstream-listener", "off", "--", process.execPath, "-e", "setInterval(() => {}, 1000)"]);
  t.equal((await send(off.port, "/readyz")).status, 200, "off: not required");
  off.child.kill("SIGTERM");
  await off.exited;
});

t.test("a relative unix path is a usage error", async (t) => {
  const result = await runToExit([BINARY, "--upstream", "unix:run/app.sock"]);
  t.equal(result.code, 2);
  t.equal(result.stderr.trimEnd(), 'error: --upstream: expected unix:<absolute path> or unix://<absolute path>, got "unix:run/app.sock"');
});
