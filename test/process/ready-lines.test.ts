// The built program's log over a real start, a failing upstream check and a drain: a line says "reporting ready" only when /readyz answers 200 (issue 41).
import { createServer as createHttpServer } from "node:http";
import { createServer, type Server } from "node:net";
import t from "tap";
import { send } from "../helpers/http-client.js";
import { BUILT_ARTIFACTS, spawnDaemon, type SpawnedDaemon } from "../helpers/spawn-daemon.js";
import { closedPort } from "../helpers/test-doubles.js";
import { serveOnLoopback } from "../helpers/upstream.js";

/** Resolves once `count` records with `msg` have been read from the daemon's stdout; no timer. */
function lines(daemon: SpawnedDaemon, msg: string, count: number): Promise<Array<Record<string, unknown>>> {
  const found = () => daemon.records.filter((record) => record.msg === msg);
  return new Promise((resolve, reject) => {
    const check = () => {
      if (found().length < count) return;
      daemon.child.stdout!.off("data", onData);
      resolve(found());
    };
    // Registered after spawnDaemon's own reader, so the records of a chunk are parsed when this runs.
    const onData = () => setImmediate(check);
    daemon.child.stdout!.on("data", onData);
    void daemon.exited.then(() => reject(new Error(`exited before ${count} "${msg}" lines`)));
    check();
  });
}

/** A required port the test opens and closes: a plain listener on 127.0.0.1. */
async function listenOn(port: number): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return server;
}

const binary = BUILT_ARTIFACTS.find((artifact) => artifact.name === "binary") ?? BUILT_ARTIFACTS[0]!;

t.test(`${binary.name}: no "reporting ready" line while /readyz answers 503`, { skip: !binary.built && `${binary.name} is not built: run make build` }, async (t) => {
  let appReady = false;
  const upstreamPort = await serveOnLoopback(t, createHttpServer((request, response) => {
    response.statusCode = request.url === "/ready" && !appReady ? 503 : 200;
    response.end();
  }));
  const required = await closedPort();
  const daemon = await spawnDaemon(t, binary.command, [
    "--upstream", `http://127.0.0.1:${upstreamPort}`,
    "--readiness-required-listener", String(required),
    "--readiness-upstream-path", "/ready",
    "--readiness-cache-ttl", "0s",
    "--shutdown-delay", "30s",
  ]);
  t.teardown(() => {
    if (daemon.child.exitCode === null) daemon.child.kill("SIGKILL");
  });
  const readyz = async () => (await send(daemon.port, "/readyz")).status;
  const statuses: number[] = [];
  const probe = async () => {
    statuses.push(await readyz());
    return statuses.at(-1);
  };

  // A start: nothing listens on the required port and the app answers 503. Neither is a warning yet.
  t.equal(await probe(), 503, "start");
  t.match(await lines(daemon, "required listeners missing; reporting not ready", 1), [{ level: 30, missing: [required] }]);
  t.match(await lines(daemon, "upstream health check failing; reporting not ready", 1), [{ level: 30, reason: "status 503", status: 503 }]);

  // The port listens, the app still fails: true about the listeners, and not a claim of ready.
  let port = await listenOn(required);
  t.equal(await probe(), 503, "the listener up, the upstream check failing");
  t.match(await lines(daemon, "required listeners present; other checks failing", 1), [{ level: 30, ports: [required], failedChecks: ["upstream"] }]);

  // The app turns healthy: now, and only now, a line says reporting ready.
  appReady = true;
  t.equal(await probe(), 200, "every check passing");
  t.match(await lines(daemon, "readiness checks passing; reporting ready", 1), [{ level: 30, checks: [`listener-${required}`, "upstream", "shutdown"] }]);

  // The drain: the port goes and comes back while /readyz says draining.
  daemon.child.kill("SIGTERM");
  await lines(daemon, "draining", 1);
  t.equal(await probe(), 503, "draining");
  await new Promise<void>((resolve) => port.close(() => resolve()));
  t.equal(await probe(), 503, "draining, the listener gone");
  t.match(await lines(daemon, "required listeners missing; reporting not ready", 2), [{}, { level: 40 }], "a listener gone after it was up is a warning");
  port = await listenOn(required);
  t.equal(await probe(), 503, "draining, the listener back");
  t.match(await lines(daemon, "required listeners present; other checks failing", 2), [{}, { failedChecks: ["shutdown"] }]);

  const claims = daemon.records.filter((record) => String(record.msg).includes("reporting ready"));
  t.same(claims.map((record) => record.msg), ["readiness checks passing; reporting ready"], "one claim of ready, made while /readyz answered 200");
  t.same(statuses, [503, 503, 200, 503, 503, 503]);
  daemon.child.kill("SIGTERM");
  port.close();
  await daemon.exited;
});
