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
import { deferred } from "../helpers/test-doubles.js";
import { startUpstream } from "../helpers/upstream.js";

const grpcMissing = grpcioMissing();

t.test("the jitter: up to 10 % below the maximum, never above", async (t) => {
  t.equal(jitteredAgeMs(2000, () => 0), 2000);
  t.equal(jitteredAgeMs(2000, () => 0.999999), 1800);
  t.equal(jitteredAgeMs(2000, () => 0.5), 1900);
});

t.test("HTTP/1.1 keep-alive: an answer that comes after the age says Connection: close, and the next request gets a new connection", async (t) => {
  const upstream = await startUpstream(t);
  // The app takes three times the age over its answer: the connection is busy when it ages.
  upstream.handle((req, res) => (req.url === "/slow" ? setTimeout(() => res.end("slow"), 1500) : res.end("quick")));
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url, "--max-connection-age", "500ms"]);
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
  t.same(await get("/slow"), { connection: "close", body: "slow" }, "past the age: Connection: close on the answer");
  t.equal(sockets.size, 1, "both on the first connection");
  t.same(await get("/quick"), { connection: "keep-alive", body: "quick" });
  t.equal(sockets.size, 2, "then a new connection");
});

t.test("HTTP/1.1: an idle keep-alive connection is closed at its age, not after the keep-alive time", async (t) => {
  const upstream = await startUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url, "--max-connection-age", "500ms"]);
  const socket = connect(daemon.port, "127.0.0.1");
  const opened = performance.now();
  let received = "";
  socket.on("data", (chunk: Buffer) => (received += chunk.toString()));
  socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  await new Promise((resolve) => socket.on("end", resolve));
  const elapsed = performance.now() - opened;
  t.match(received, /^HTTP\/1\.1 200 [^]*\r\nConnection: keep-alive\r\n[^]*ok$/i, "answered, kept alive");
  t.ok(elapsed >= 450, `closed by the proxy at ${elapsed.toFixed(0)} ms`);
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
  const daemon = await startTestDaemon(t, ["--upstream", app.url, "--max-connection-age", "1s", "--max-connection-age-grace", "500ms"]);
  const session = h2Connect(t, daemon.port);
  const opened = performance.now();
  const goaway = new Promise<{ code: number; at: number }>((resolve) => session.on("goaway", (code) => resolve({ code, at: performance.now() })));
  const stream = session.request({ ":path": "/long" });
  stream.on("data", () => {});
  stream.on("error", () => {});
  const streamClosed = new Promise<{ code: number; at: number }>((resolve) => stream.on("close", () => resolve({ code: stream.rstCode ?? -1, at: performance.now() })));
  const away = await goaway;
  t.equal(away.code, http2.constants.NGHTTP2_NO_ERROR, "GOAWAY NO_ERROR");
  t.ok(away.at - opened >= 850, `GOAWAY at ${(away.at - opened).toFixed(0)} ms`);
  const closed = await streamClosed;
  t.equal(closed.code, http2.constants.NGHTTP2_CANCEL, "the stream open past the grace: RST_STREAM CANCEL");
  t.ok(closed.at - away.at >= 450, `reset ${(closed.at - away.at).toFixed(0)} ms after the GOAWAY`);
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
