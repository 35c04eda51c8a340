// Every timeout on the binary's real clock, once (the in-process tests move the daemon's timers by hand and assert each to the millisecond): a slow head's 408, --idle-timeout, --queue-timeout, --shutdown-timeout, the gRPC probe's --readiness-upstream-timeout and --max-connection-age. Each must fire, never before its time (a timer does not run early), with bounds a loaded machine never reaches.
import { existsSync } from "node:fs";
import { request } from "node:http";
import { connect } from "node:net";
import t from "tap";
import { startGatedUpstream } from "../helpers/gated-upstream.js";
import { send } from "../helpers/http-client.js";
import { startSilentApp } from "../helpers/silent-app.js";
import { BINARY, spawnDaemon } from "../helpers/spawn-daemon.js";
import { within } from "../helpers/test-doubles.js";

const skip = existsSync(BINARY) ? false : "the binary is not built (make build)";
/** Far past every timeout here: reached only when one never fires. */
const BOUND_MS = 30_000;

/** Opens a connection, writes `text`, and resolves with what came back when the proxy closes it, and when that was (ms after the write). */
function closedAfter(port: number, text: string): Promise<{ received: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let received = "";
    let wroteAt = 0;
    socket.on("connect", () => {
      wroteAt = performance.now();
      socket.write(text);
    });
    socket.on("data", (chunk: Buffer) => (received += chunk.toString("latin1")));
    socket.on("error", reject);
    socket.on("close", () => resolve({ received, ms: performance.now() - wroteAt }));
  });
}

t.test("a slow head, --idle-timeout, --queue-timeout and --shutdown-timeout, each at its time", { skip }, async (t) => {
  const app = await startGatedUpstream(t);
  const daemon = await spawnDaemon(t, [BINARY], ["--upstream", app.url, "--idle-timeout", "1s", "--max-concurrency", "1", "--queue-timeout", "1s", "--shutdown-timeout", "1s"]);

  // A head that never ends, beside everything below: its 408 comes at the head timeout (10 s, on the listener's once-a-second tick).
  const slowHead = closedAfter(daemon.port, "GET /slow HTTP/1.1\r\nHost: a\r\nX-Dribble: ");

  // An event, then quiet: cut 1 s after the last byte moved.
  const events = new Promise<{ body: string; complete: boolean; quietMs: number }>((resolve, reject) => {
    request({ host: "127.0.0.1", port: daemon.port, path: "/events", agent: false }, (res) => {
      let body = "";
      let lastAt = performance.now();
      res.on("data", (chunk: Buffer) => {
        body += chunk.toString();
        lastAt = performance.now();
      });
      res.on("error", () => {});
      res.on("close", () => resolve({ body, complete: res.complete, quietMs: performance.now() - lastAt }));
    })
      .on("error", reject)
      .end();
  });
  const [streaming] = await app.arrivals(1);
  streaming!.res.writeHead(200, { "content-type": "text/event-stream" });
  streaming!.res.write("data: 1\n\n");
  const cut = await within(events, BOUND_MS, undefined);
  t.ok(cut, "the quiet stream was cut");
  t.same([cut?.body, cut?.complete], ["data: 1\n\n", false], "after its event, never a body that looks complete");
  t.ok(cut!.quietMs >= 900, `not before 1 s of quiet (${cut!.quietMs.toFixed(0)} ms)`);
  await streaming!.aborted;

  // The one slot held by a request the app never answers: the next waits its second in the queue, then 503.
  const held = send(daemon.port, "/held").catch((error: unknown) => error);
  await app.arrivals(2);
  const queuedAt = performance.now();
  const queued = await within(send(daemon.port, "/queued"), BOUND_MS, undefined);
  const queuedMs = performance.now() - queuedAt;
  t.equal(queued?.status, 503, "queue timeout: 503 overloaded");
  t.ok(queuedMs >= 990, `not before 1 s in the queue (${queuedMs.toFixed(0)} ms)`);
  t.equal(app.arrived.length, 2, "the app never saw it");

  const head = await within(slowHead, BOUND_MS, undefined);
  t.match(head?.received, /^HTTP\/1\.1 408 /, "the slow head's 408, then the close");
  t.ok(head!.ms >= 8_900, `not before the head timeout's ten ticks (${head!.ms.toFixed(0)} ms)`);

  // SIGTERM with /held in flight: an idle grace, then the second of --shutdown-timeout, then it is cut and the process ends.
  const termAt = performance.now();
  daemon.child.kill("SIGTERM");
  t.match(await within(daemon.waitForLog("shutdown timeout reached; closing remaining connections"), BOUND_MS, undefined), { shutdownTimeoutMs: 1000 });
  const stopMs = performance.now() - termAt;
  t.ok(stopMs >= 1_900, `the grace and the timeout were served (${stopMs.toFixed(0)} ms)`);
  t.equal(await within(daemon.exited, BOUND_MS, "still running"), 0, "then it exits");
  await held;
});

t.test("the gRPC probe's --readiness-upstream-timeout and --max-connection-age, at their time", { skip }, async (t) => {
  const app = await startSilentApp(t);
  const daemon = await spawnDaemon(t, [BINARY], ["--upstream", app.url, "--readiness-upstream-grpc-service", "", "--readiness-upstream-timeout", "1s", "--readiness-cache-ttl", "0s", "--max-connection-age", "1s"]);
  // The start's own first check may be under way, and a caller joins it: the one timed below begins on its own.
  await within(send(daemon.port, "/readyz/upstream"), BOUND_MS, undefined);
  const askedAt = performance.now();
  const readyz = await within(send(daemon.port, "/readyz/upstream"), BOUND_MS, undefined);
  const askedMs = performance.now() - askedAt;
  t.same([readyz?.status, readyz?.text()], [503, "upstream failed: timeout after 1s\n"], "a silent app: the probe timed out");
  t.ok(askedMs >= 990, `not before the probe's second (${askedMs.toFixed(0)} ms)`);

  // A keep-alive connection left idle is closed at its age (1 s less up to 10 %), not after the keep-alive time.
  const aged = await within(closedAfter(daemon.port, "GET /health HTTP/1.1\r\nHost: a\r\n\r\n"), BOUND_MS, undefined);
  t.match(aged?.received, /^HTTP\/1\.1 200 [^]*\r\nConnection: keep-alive\r\n/i, "answered, kept alive");
  t.ok(aged!.ms >= 890, `closed at its age, not before (${aged!.ms.toFixed(0)} ms)`);
});
