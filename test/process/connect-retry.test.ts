// --upstream-connect-retry against the built binary (CONTRACT §17): an app that starts listening while a POST is being retried gets its body once, for an HTTP/1.1 and an h2c app on a TCP port and on a unix socket; a request that was sent is never retried; past the window, the 502 of today.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { createServer as createH2Server, type Http2Server } from "node:http2";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import t from "tap";
import { send } from "../helpers/http-client.js";
import { scrapeText, seriesValue } from "../helpers/scrape.js";
import { BUILT_ARTIFACTS, spawnDaemon, type SpawnedDaemon } from "../helpers/spawn-daemon.js";
import { closedPort } from "../helpers/test-doubles.js";

const binary = BUILT_ARTIFACTS.find((artifact) => artifact.name === "binary")!;
const skip = !binary.built && "the binary is not built: run make build";
const RETRIES = "readiness_proxy_upstream_connect_retries_total";

/** Resolves once the metric shows a first retry: the request is being retried, not merely on its way. */
async function firstRetry(metricsPort: number): Promise<void> {
  const deadline = performance.now() + 8_000;
  while (performance.now() < deadline) {
    if ((seriesValue(await scrapeText(metricsPort), RETRIES) ?? 0) >= 1) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error("no connect retry within 8 s");
}

async function accessLine(daemon: SpawnedDaemon): Promise<Record<string, unknown>> {
  return daemon.waitForLog("request");
}

for (const address of ["tcp", "unix"] as const) {
  for (const protocol of ["http1", "h2c"] as const) {
    t.test(`${protocol} app on ${address === "tcp" ? "a TCP port" : "a unix socket"}: it starts half a second into the POST's retries; the body is seen once`, { skip }, async (t) => {
      // A TCP port nothing listens on is refused (ECONNREFUSED); a socket path not yet bound is ENOENT.
      const appPort = await closedPort();
      const socketPath = join(mkdtempSync(join(tmpdir(), "rp-retry-")), "app.sock");
      t.teardown(() => rmSync(dirname(socketPath), { recursive: true, force: true }));
      const upstream = address === "tcp" ? `http://127.0.0.1:${appPort}` : `unix:${socketPath}`;
      const metricsPort = await closedPort();
      const daemon = await spawnDaemon(t, binary.command, ["--upstream", upstream, "--upstream-protocol", protocol, "--upstream-connect-retry", "10s", "--access-log", "--metrics-listen", `127.0.0.1:${metricsPort}`]);
      const bodies: string[] = [];
      const handler = (request: IncomingMessage | import("node:http2").Http2ServerRequest, response: { end(text: string): void }) => {
        let body = "";
        request.on("data", (chunk: Buffer) => (body += chunk.toString()));
        request.on("end", () => {
          bodies.push(`${request.method} ${body}`);
          response.end(`app got ${body}`);
        });
      };
      const app: Server | Http2Server = protocol === "http1" ? createServer(handler) : createH2Server(handler as never);
      t.teardown(() => app.close());
      const reply = send(daemon.port, "/orders", { method: "POST", body: "order-42", headers: { "content-type": "text/plain" } });
      await firstRetry(metricsPort);
      // The scenario itself, not an ordering: the app comes up while the retries go on.
      await new Promise((resolve) => setTimeout(resolve, 500));
      await new Promise<void>((resolve) => (address === "tcp" ? app.listen(appPort, "127.0.0.1", resolve) : app.listen(socketPath, resolve)));
      const answer = await reply;
      t.same([answer.status, answer.text()], [200, "app got order-42"]);
      t.same(bodies, ["POST order-42"], "the body reached the app once");
      const line = await accessLine(daemon);
      const retries = Number(line.connectRetries);
      t.ok(retries >= 3, `connectRetries on the access line: ${retries}`);
      t.equal(seriesValue(await scrapeText(metricsPort), RETRIES), retries, "the counter counts them");
      daemon.child.kill("SIGTERM");
      t.equal(await daemon.exited, 0);
    });
  }
}

for (const protocol of ["http1", "h2c"] as const) {
  t.test(`${protocol} app: a request that was sent is never retried, whatever becomes of it: the 502, the body seen once, no retry counted`, { skip }, async (t) => {
    const metricsPort = await closedPort();
    const bodies: string[] = [];
    // The app reads the body, then its connection breaks before any answer: a reset, not a refusal.
    const onRequest = (request: IncomingMessage | import("node:http2").Http2ServerRequest) => {
      request.on("data", (chunk: Buffer) => {
        bodies.push(chunk.toString());
        if ("stream" in request) request.stream.session?.destroy();
        else request.socket.destroy();
      });
    };
    const app: Server | Http2Server = protocol === "http1" ? createServer(onRequest) : createH2Server(onRequest as never);
    await new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve));
    t.teardown(() => app.close());
    const appPort = (app.address() as AddressInfo).port;
    const daemon = await spawnDaemon(t, binary.command, ["--upstream", `http://127.0.0.1:${appPort}`, "--upstream-protocol", protocol, "--upstream-connect-retry", "10s", "--access-log", "--metrics-listen", `127.0.0.1:${metricsPort}`]);
    const answer = await send(daemon.port, "/orders", { method: "POST", body: "order-43", headers: { "content-type": "text/plain" } });
    t.equal(answer.status, 502);
    t.same(bodies, ["order-43"], "the app saw the body once");
    const line = await accessLine(daemon);
    t.equal(line.status, 502);
    t.equal(line.connectRetries, 0, "no connect retry on the access line");
    t.equal(seriesValue(await scrapeText(metricsPort), RETRIES), 0, "none counted");
    daemon.child.kill("SIGTERM");
    t.equal(await daemon.exited, 0);
  });
}

t.test("past the window: the 502 of today, the retries on its line; off by default (connectRetries absent)", { skip }, async (t) => {
  const appPort = await closedPort();
  const daemon = await spawnDaemon(t, binary.command, ["--upstream", `http://127.0.0.1:${appPort}`, "--upstream-connect-retry", "300ms", "--access-log"]);
  const answer = await send(daemon.port, "/x", { method: "POST", body: "b" });
  t.equal(answer.status, 502);
  const line = await accessLine(daemon);
  t.ok(Number(line.connectRetries) >= 2, `retried within the window: ${String(line.connectRetries)}`);
  t.ok(Number(line.durationMs) >= 150, `waited for it: ${String(line.durationMs)} ms`);

  const off = await spawnDaemon(t, binary.command, ["--upstream", `http://127.0.0.1:${appPort}`, "--access-log"]);
  t.equal((await send(off.port, "/y")).status, 502);
  t.notOk("connectRetries" in (await accessLine(off)), "no field without the flag");
});
