// --max-connection-age through a real daemon and real peers (CONTRACT §15): HTTP/1.1 keep-alive gets Connection: close within the age, an idle one is closed; HTTP/2 gets GOAWAY and its stream is reset after the grace; a grpcio channel follows every GOAWAY with no failed call.
import { spawn } from "node:child_process";
import { Agent, request } from "node:http";
import http2 from "node:http2";
import { connect } from "node:net";
import { join } from "node:path";
import t from "tap";
import { jitteredAgeMs } from "../../src/relay/connection-age.js";
import { grpcioMissing, startGrpcApp, SYSTEM_PYTHON } from "../helpers/grpc-app.js";
import { h2Connect, startH2Upstream } from "../helpers/h2.js";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { deferred, ManualTimers } from "../helpers/test-doubles.js";
import { startUpstream } from "../helpers/upstream.js";

const grpcMissing = grpcioMissing();

t.test("the jitter: up to 10 % below the maximum, never above", async (t) => {
  t.equal(jitteredAgeMs(2000, () => 0), 2000);
  t.equal(jitteredAgeMs(2000, () => 0.999999), 1800);
  t.equal(jitteredAgeMs(2000, () => 0.5), 1900);
});

t.test("HTTP/1.1 keep-alive: an answer that comes after the age says Connection: close, and the next request gets a new connection", async (t) => {
  const upstream = await startUpstream(t);
  // The app holds its answer while the daemon's timers pass the age: the connection is busy when it ages.
  const slowArrived = deferred<() => void>();
  upstream.handle((req, res) => (req.url === "/slow" ? slowArrived.resolve(() => res.end("slow")) : res.end("quick")));
  const timers = new ManualTimers();
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url, "--max-connection-age", "500ms"], undefined, { timers });
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  const sockets = new Set<unknown>();
  const get = (path: string) =>
    new Promise<{ connection: string | undefined; body: string }>((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port: daemon.port, path, agent }, (res) => {
        let body = "";
        res.on("data", (chunk: Buffer) => (body += chunk.toString()));
        res.on("end", () => resolve({ connection: res.headers.connection, body }));
      });
      req.on("socket", (socket) => sockets.add(socket));
      req.on("error", reject).end();
    });
  t.same(await get("/quick"), { connection: "keep-alive", body: "quick" }, "young: kept alive");
  const slow = get("/slow");
  const answer = await slowArrived.promise;
  timers.advance(500);
  answer();
  t.same(await slow, { connection: "close", body: "slow" }, "past the age: Connection: close on the answer");
  t.equal(sockets.size, 1, "both on the first connection");
  t.same(await get("/quick"), { connection: "keep-alive", body: "quick" });
  t.equal(sockets.size, 2, "then a new connection");
});

t.test("HTTP/1.1: an idle keep-alive connection is closed at its age, not after the keep-alive time", async (t) => {
  const upstream = await startUpstream(t);
  const timers = new ManualTimers();
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url, "--max-connection-age", "500ms"], undefined, { timers });
  const socket = connect(daemon.port, "127.0.0.1");
  let received = "";
  let answered = deferred();
  socket.on("data", (chunk: Buffer) => {
    received += chunk.toString();
    if (received.endsWith("ok")) answered.resolve();
  });
  let ended = false;
  const end = new Promise((resolve) => socket.on("end", resolve)).then(() => (ended = true));
  socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  await answered.promise;
  t.match(received, /^HTTP\/1\.1 200 [^]*\r\nConnection: keep-alive\r\n[^]*ok$/i, "answered, kept alive");
  // Its age is 450 to 500 ms (the jitter): at 449 it still serves, kept alive.
  timers.advance(449);
  received = "";
  answered = deferred();
  socket.write("GET /again HTTP/1.1\r\nHost: x\r\n\r\n");
  await answered.promise;
  t.match(received, /^HTTP\/1\.1 200 [^]*\r\nConnection: keep-alive\r\n/i, "449 ms: young, kept alive");
  t.equal(ended, false);
  timers.advance(51);
  await end;
  t.pass("closed by the proxy at its age, long before the keep-alive time");
  socket.destroy();
});

t.test("HTTP/2: GOAWAY at the age; a stream still open after the grace is reset, here and at the app", async (t) => {
  const app = await startH2Upstream(t);
  const appReset = deferred<number>();
  app.handle((stream) => {
    stream.on("close", () => appReset.resolve(stream.rstCode ?? -1));
    stream.respond({ ":status": 200 });
    stream.write("streaming");
  });
  const timers = new ManualTimers();
  const daemon = await startTestDaemon(t, ["--upstream", app.url, "--max-connection-age", "1s", "--max-connection-age-grace", "500ms"], undefined, { timers });
  const session = h2Connect(t, daemon.port);
  let goneAway = false;
  const goaway = new Promise<number>((resolve) => session.on("goaway", (code) => resolve(code))).finally(() => (goneAway = true));
  const stream = session.request({ ":path": "/long" });
  const streaming = deferred();
  stream.on("data", () => streaming.resolve());
  stream.on("error", () => {});
  let streamOpen = true;
  const streamClosed = new Promise<number>((resolve) => stream.on("close", () => resolve(stream.rstCode ?? -1))).finally(() => (streamOpen = false));
  await streaming.promise;
  // A PING's answer: the client has read everything the proxy wrote before it.
  const pinged = () => new Promise<void>((resolve) => session.ping(() => resolve()));
  // The age is 900 to 1,000 ms (the jitter), the grace 500 ms after the GOAWAY.
  timers.advance(899);
  await pinged();
  t.equal(goneAway, false, "899 ms: no GOAWAY yet");
  timers.advance(101);
  t.equal(await goaway, http2.constants.NGHTTP2_NO_ERROR, "GOAWAY NO_ERROR by 1 s");
  timers.advance(399);
  await pinged();
  t.equal(streamOpen, true, "the stream is open within the grace");
  timers.advance(101);
  t.equal(await streamClosed, http2.constants.NGHTTP2_CANCEL, "the stream open past the grace: RST_STREAM CANCEL");
  t.equal(await appReset.promise, http2.constants.NGHTTP2_CANCEL, "the app's stream reset too");
  await new Promise((resolve) => (session.closed ? resolve(undefined) : session.on("close", resolve)));
  t.pass("the connection closed");
});

t.test("a grpcio channel reconnects by itself across several GOAWAYs: no failed call", { skip: grpcMissing }, async (t) => {
  const app = await startGrpcApp(t);
  const daemon = await startTestDaemon(t, ["--upstream", `http://127.0.0.1:${app.port}`, "--max-connection-age", "700ms", "--max-connection-age-grace", "5s"]);
  let connections = 0;
  for (const server of daemon.server.sockets.servers) server.on("connection", () => connections++);
  const client = spawn(SYSTEM_PYTHON, ["-u", join(import.meta.dirname, "../helpers/grpc-calls.py"), `127.0.0.1:${daemon.port}`, "200", "15"], { stdio: ["ignore", "pipe", "pipe"] });
  t.teardown(() => client.kill("SIGKILL"));
  let out = "";
  let err = "";
  client.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  client.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => client.on("exit", resolve));
  t.equal(code, 0, err);
  t.match(out.trim().split("\n").at(-1), /^done ok=200 failed=0$/, out);
  t.ok(connections >= 3, `${connections} connections: the channel followed each GOAWAY to a new one`);
});
