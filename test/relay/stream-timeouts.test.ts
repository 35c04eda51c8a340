// --idle-timeout and --max-request-duration through a real daemon and real peers (CONTRACT §15): SSE kept alive and cut, a stalled upload, an h2 stream reset CANCEL both ways, a WebSocket, a long stream ended and a late head's 504; each with its log, access line and metric. Time is the daemon's hand-moved clock, swept by hand: nothing waits for a timeout.
import { createServer, request, type IncomingMessage, type ServerResponse } from "node:http";
import http2 from "node:http2";
import { connect, type AddressInfo, type Socket } from "node:net";
import t, { type Test } from "tap";
import { parseCommandLine } from "../../src/cli.js";
import { h2Connect, startH2Upstream } from "../helpers/h2.js";
import { startTestDaemon, type TestDaemon } from "../helpers/in-process-daemon.js";
import { scrapeText, seriesValue, untilSeries } from "../helpers/scrape.js";
import { deferred, ManualTimers } from "../helpers/test-doubles.js";
import { startUpstream } from "../helpers/upstream.js";

/** What the daemon recorded about a request ended by a deadline: the throttled warn line, its access line, the metric. */
async function checkRecorded(t: Test, daemon: TestDaemon, path: string, kind: "idle" | "duration", status: number): Promise<void> {
  const message = kind === "idle" ? "idle timeout: exchange ended" : "max request duration: exchange ended";
  t.ok(daemon.logs.records.some((record) => record.msg === message && record.url === path && record.timeout === kind), `the warn line for ${path}`);
  // That line says it (at warn, or at debug within its throttle window): a 504 of our own adds no second line, as README's table of log lines has it.
  t.same(daemon.logs.records.filter((record) => record.url === path && record.msg !== "request").map((record) => record.msg), [message], `one line for ${path}`);
  const line = daemon.logs.records.find((record) => record.msg === "request" && record.path === path);
  t.match(line, { timeout: kind, status }, `the access line for ${path}`);
  t.notOk(line?.aborted, "not reported as the client's abort");
  const reason = kind === "idle" ? "idle_timeout" : "max_duration";
  t.ok((seriesValue(await scrapeText(daemon.metricsPort!), `readiness_proxy_upstream_errors_total{reason="${reason}"}`) ?? 0) >= 1, `the ${reason} metric`);
}

/** GETs `path` and collects the body as it comes; resolves when the response closes, saying whether it completed. */
function streamFrom(port: number, path: string, onChunk: (text: string) => void = () => {}) {
  return new Promise<{ status: number; body: string; complete: boolean }>((resolve, reject) => {
    request({ host: "127.0.0.1", port, path, agent: false }, (res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => {
        body += chunk.toString();
        onChunk(chunk.toString());
      });
      res.on("error", () => {});
      res.on("close", () => resolve({ status: res.statusCode ?? 0, body, complete: res.complete }));
    })
      .on("error", reject)
      .end();
  });
}

const ARGS = ["--access-log", "--metrics-listen", "127.0.0.1:0"];

/** A daemon on hand-moved timers, and `pass(ms)`: that much time goes by (its timers run on the way), then one sweep of the deadlines (which ends what is due at once). */
async function daemonOnClock(t: Test, args: string[]) {
  const timers = new ManualTimers(1000);
  const daemon = await startTestDaemon(t, [...args, ...ARGS], undefined, { timers });
  const pass = (ms: number) => {
    timers.advance(ms);
    daemon.deadlines!.sweep();
  };
  return { daemon, pass };
}

t.test("the options: off by default, flag and env, a bad duration is one usage line naming the flag, exit 2", async (t) => {
  const parse = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
    let err = "";
    const result = parseCommandLine(argv, env, { writeOut: () => {}, writeErr: (text) => (err += text) });
    return { result, err: err.trimEnd() };
  };
  t.match(parse([]).result, { config: { exchangeIdleTimeoutMs: 0, maxRequestDurationMs: 0, maxConnectionAgeMs: 0, maxConnectionAgeGraceMs: 30_000 } });
  t.match(parse(["--idle-timeout", "3s", "--max-request-duration=1m30s"], { READINESS_PROXY_MAX_CONNECTION_AGE: "10m", READINESS_PROXY_MAX_CONNECTION_AGE_GRACE: "5s" }).result, {
    config: { exchangeIdleTimeoutMs: 3000, maxRequestDurationMs: 90_000, maxConnectionAgeMs: 600_000, maxConnectionAgeGraceMs: 5000 },
  });
  for (const [argv, env, line] of [
    [["--idle-timeout", "5"], {}, 'error: --idle-timeout: expected a duration like 500ms, 1s or 1m30s, got "5"'],
    [["--max-request-duration", "soon"], {}, 'error: --max-request-duration: expected a duration like 500ms, 1s or 1m30s, got "soon"'],
    [[], { READINESS_PROXY_MAX_CONNECTION_AGE: "-1s" }, 'error: READINESS_PROXY_MAX_CONNECTION_AGE: expected a duration like 500ms, 1s or 1m30s, got "-1s"'],
    [["--max-connection-age-grace", "30"], {}, 'error: --max-connection-age-grace: expected a duration like 500ms, 1s or 1m30s, got "30"'],
  ] as const) {
    const { result, err } = parse([...argv], env);
    t.same(result, { action: "exit", exitCode: 2 });
    t.equal(err, line);
  }
});

t.test("an SSE stream sending every 2 s lives through --idle-timeout 3s; when it stops it is cut after 3 s, both connections closed", async (t) => {
  const upstream = await startUpstream(t);
  const upstreamClosed = deferred();
  const responding = deferred<ServerResponse>();
  upstream.handleRaw((req: IncomingMessage, res: ServerResponse) => {
    res.on("close", () => upstreamClosed.resolve());
    res.writeHead(200, { "content-type": "text/event-stream" });
    responding.resolve(res);
    req.resume();
  });
  const { daemon, pass } = await daemonOnClock(t, ["--upstream", upstream.url, "--idle-timeout", "3s"]);
  let arrived = deferred();
  const answering = streamFrom(daemon.port, "/events", () => arrived.resolve());
  const res = await responding.promise;
  // An event every 2 s for 6 s: each sweep sees it moving.
  for (let sent = 0; sent < 4; sent++) {
    if (sent > 0) pass(2000);
    arrived = deferred();
    res.write(`data: ${sent}\n\n`);
    await arrived.promise;
    pass(0);
  }
  pass(2999);
  t.equal(daemon.deadlines!.watching, 1, "not cut after 2,999 ms of quiet");
  pass(1);
  const answer = await answering;
  t.equal(answer.body, "data: 0\n\ndata: 1\n\ndata: 2\n\ndata: 3\n\n", "every event arrived: 6 s of a stream that moves every 2 s");
  t.equal(answer.complete, false, "the response was cut at 3 s of quiet, never a body that looks complete");
  await upstreamClosed.promise;
  t.pass("the app's connection was closed too");
  await checkRecorded(t, daemon, "/events", "idle", 200);
});

t.test("an upload that stalls is ended by --idle-timeout: no answer, both connections closed", async (t) => {
  const upstream = await startUpstream(t);
  const appSaw = deferred<number>();
  const appGot100 = deferred();
  upstream.handleRaw((req) => {
    let bytes = 0;
    req.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes === 100) appGot100.resolve();
    });
    req.on("close", () => appSaw.resolve(bytes));
  });
  const { daemon, pass } = await daemonOnClock(t, ["--upstream", upstream.url, "--idle-timeout", "500ms"]);
  const socket = connect(daemon.port, "127.0.0.1");
  let received = "";
  socket.on("data", (chunk: Buffer) => (received += chunk.toString()));
  const closed = new Promise((resolve) => socket.on("close", resolve));
  socket.write("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n" + "a".repeat(100));
  await appGot100.promise;
  pass(0);
  pass(499);
  t.equal(daemon.deadlines!.watching, 1, "not ended before 500 ms of quiet");
  pass(1);
  await closed;
  t.equal(received, "", "the client got its connection closed, no answer");
  t.equal(await appSaw.promise, 100, "the app's request was cut after the bytes that came");
  await checkRecorded(t, daemon, "/upload", "idle", 0);
});

t.test("--max-request-duration ends a healthy long stream, and answers 504 when no head came", async (t) => {
  const upstream = await startUpstream(t);
  const slowHeadArrived = deferred();
  upstream.handleRaw((req, res) => {
    req.resume();
    if (req.url === "/slow-head") return slowHeadArrived.resolve(); // never answers
    res.writeHead(200, { "content-type": "text/plain" });
    const timer = setInterval(() => res.write("tick\n"), 5);
    res.on("close", () => clearInterval(timer));
  });
  const { daemon, pass } = await daemonOnClock(t, ["--upstream", upstream.url, "--max-request-duration", "500ms"]);
  const moving = deferred();
  let ticked = "";
  const ticking = streamFrom(daemon.port, "/ticks", (text) => {
    ticked += text;
    if (ticked.split("\n").length > 4) moving.resolve();
  });
  await moving.promise;
  // Moving all along, and still ended at 500 ms.
  pass(499);
  t.equal(daemon.deadlines!.watching, 1, "not ended before 500 ms");
  pass(1);
  const ticks = await ticking;
  t.equal(ticks.status, 200);
  t.equal(ticks.complete, false, "cut, not ended cleanly");
  t.ok(ticks.body.split("\n").length > 3, "it was moving when it was ended");
  await checkRecorded(t, daemon, "/ticks", "duration", 200);
  const lateAnswer = streamFrom(daemon.port, "/slow-head");
  await slowHeadArrived.promise;
  pass(500);
  const late = await lateAnswer;
  t.equal(late.status, 504);
  t.match(JSON.parse(late.body), { error: { code: 504 } });
  t.equal(late.complete, true, "a whole 504 of our own");
  await checkRecorded(t, daemon, "/slow-head", "duration", 504);
});

t.test("an h2 stream that stops moving: RST_STREAM CANCEL to the client and to the app", async (t) => {
  const app = await startH2Upstream(t);
  const appReset = deferred<number>();
  app.handle((stream) => {
    stream.on("close", () => appReset.resolve(stream.rstCode ?? -1));
    stream.respond({ ":status": 200, "content-type": "text/event-stream" });
    stream.write("data: hello\n\n");
  });
  const { daemon, pass } = await daemonOnClock(t, ["--upstream", app.url, "--idle-timeout", "500ms"]);
  const session = h2Connect(t, daemon.port);
  const stream = session.request({ ":path": "/h2-events" });
  let body = "";
  const hello = deferred();
  stream.on("data", (chunk: Buffer) => {
    body += chunk.toString();
    hello.resolve();
  });
  stream.on("error", () => {});
  const closed = new Promise<number>((resolve) => stream.on("close", () => resolve(stream.rstCode ?? -1)));
  await hello.promise;
  pass(0);
  pass(499);
  t.equal(daemon.deadlines!.watching, 1, "not reset before 500 ms of quiet");
  pass(1);
  const clientCode = await closed;
  t.equal(body, "data: hello\n\n");
  t.equal(clientCode, http2.constants.NGHTTP2_CANCEL, "the client's stream: RST_STREAM CANCEL");
  t.equal(await appReset.promise, http2.constants.NGHTTP2_CANCEL, "the app's stream: RST_STREAM CANCEL");
  t.notOk(session.destroyed, "the connection lives on");
  await checkRecorded(t, daemon, "/h2-events", "idle", 200);
});

t.test("an h2 upload to an h2c app that stalls is ended by --idle-timeout: RST_STREAM CANCEL both ways (the head timeout was cleared for the upload)", async (t) => {
  const app = await startH2Upstream(t);
  const appReset = deferred<number>();
  const appGotPart = deferred();
  app.handle((stream) => {
    stream.on("data", () => appGotPart.resolve());
    stream.on("close", () => appReset.resolve(stream.rstCode ?? -1));
  });
  // A head timeout far beyond the test: only the idle timeout can end the stalled upload.
  const { daemon, pass } = await daemonOnClock(t, ["--upstream", app.url, "--idle-timeout", "500ms", "--response-header-timeout", "5m"]);
  const session = h2Connect(t, daemon.port);
  const stream = session.request({ ":method": "POST", ":path": "/h2-upload" }, { endStream: false });
  stream.on("error", () => {});
  const closed = new Promise<number>((resolve) => stream.on("close", () => resolve(stream.rstCode ?? -1)));
  stream.write("part of a body");
  await appGotPart.promise;
  pass(0);
  pass(500);
  const clientCode = await closed;
  t.equal(clientCode, http2.constants.NGHTTP2_CANCEL, "the client's stream: RST_STREAM CANCEL");
  t.equal(await appReset.promise, http2.constants.NGHTTP2_CANCEL, "the app's stream: RST_STREAM CANCEL");
  await checkRecorded(t, daemon, "/h2-upload", "idle", 0);
});

t.test("a WebSocket tunnel follows --idle-timeout: frames keep it, silence closes both sides", async (t) => {
  const upstreamClosed = deferred();
  const server = createServer();
  server.on("upgrade", (_req: IncomingMessage, socket: Socket) => {
    socket.on("close", () => upstreamClosed.resolve());
    socket.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  const { daemon, pass } = await daemonOnClock(t, ["--upstream", `http://127.0.0.1:${(server.address() as AddressInfo).port}`, "--idle-timeout", "500ms"]);
  const socket = connect(daemon.port, "127.0.0.1");
  socket.write("GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
  let echoed = "";
  const closed = new Promise((resolve) => socket.on("close", resolve));
  // A frame every 400 ms for 2 s: 4 times the idle timeout, and it lives.
  let echo = deferred();
  socket.on("data", (chunk: Buffer) => {
    echoed += chunk.toString();
    echo.resolve();
  });
  await echo.promise;
  for (let frame = 0; frame < 5; frame++) {
    pass(frame === 0 ? 0 : 400);
    echo = deferred();
    socket.write(`frame${frame}`);
    while (!echoed.endsWith(`frame${frame}`)) {
      await echo.promise;
      echo = deferred();
    }
    pass(0);
  }
  t.match(echoed, /^HTTP\/1\.1 101 [^]*frame0frame1frame2frame3frame4$/, "every frame echoed across 2 s");
  pass(499);
  t.equal(daemon.deadlines!.watching, 1, "open until 500 ms of silence");
  pass(1);
  await closed;
  await upstreamClosed.promise;
  t.pass("then silence closed the client's and the app's side");
  // The tunnel's line is written at the proxy's own close of the client socket, which no event here says.
  await untilSeries(daemon.metricsPort!, "readiness_proxy_upgraded_connections", 0);
  await checkRecorded(t, daemon, "/ws", "idle", 101);
});

t.test("translated both ways: h2 client to an HTTP/1.1 app (idle: RST_STREAM CANCEL, the app's connection closed), HTTP/1.1 client to an h2c app (duration: cut, the app's stream CANCEL; 504 before the head)", async (t) => {
  const h1App = await startUpstream(t);
  const h1Closed = deferred();
  h1App.handleRaw((req, res) => {
    req.resume();
    res.on("close", () => h1Closed.resolve());
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write("data: one\n\n");
  });
  const { daemon: toH1, pass: passH1 } = await daemonOnClock(t, ["--upstream", h1App.url, "--upstream-protocol", "http1", "--idle-timeout", "500ms"]);
  const session = h2Connect(t, toH1.port);
  const stream = session.request({ ":path": "/h2-to-h1" });
  const one = deferred();
  stream.on("data", () => one.resolve());
  stream.on("error", () => {});
  const closed = new Promise<number>((resolve) => stream.on("close", () => resolve(stream.rstCode ?? -1)));
  await one.promise;
  passH1(0);
  passH1(500);
  t.equal(await closed, http2.constants.NGHTTP2_CANCEL, "h2 client: RST_STREAM CANCEL");
  await h1Closed.promise;
  t.pass("the HTTP/1.1 app's connection closed");
  await checkRecorded(t, toH1, "/h2-to-h1", "idle", 200);

  const h2App = await startH2Upstream(t);
  const appReset = deferred<number>();
  let lateArrived = deferred();
  h2App.handle((h2Stream, headers) => {
    if (String(headers[":path"]).startsWith("/late")) return lateArrived.resolve(); // never answers
    h2Stream.on("close", () => appReset.resolve(h2Stream.rstCode ?? -1));
    h2Stream.respond({ ":status": 200 });
    const timer = setInterval(() => h2Stream.write("tick\n"), 5);
    h2Stream.on("close", () => clearInterval(timer));
  });
  const { daemon: toH2c, pass } = await daemonOnClock(t, ["--upstream", h2App.url, "--upstream-protocol", "h2c", "--max-request-duration", "500ms"]);
  const ticking = deferred();
  const ticksAnswer = streamFrom(toH2c.port, "/h1-to-h2c", () => ticking.resolve());
  await ticking.promise;
  pass(500);
  const ticks = await ticksAnswer;
  t.same([ticks.status, ticks.complete], [200, false], "HTTP/1.1 client: cut");
  t.equal(await appReset.promise, http2.constants.NGHTTP2_CANCEL, "the h2c app's stream: RST_STREAM CANCEL");
  await checkRecorded(t, toH2c, "/h1-to-h2c", "duration", 200);
  const lateAnswer = streamFrom(toH2c.port, "/late");
  await lateArrived.promise;
  pass(500);
  const late = await lateAnswer;
  t.same([late.status, late.complete], [504, true], "no head within the duration: 504");
  await checkRecorded(t, toH2c, "/late", "duration", 504);
  lateArrived = deferred();
  const h2Late = h2Connect(t, toH2c.port).request({ ":path": "/late-h2" });
  h2Late.on("data", () => {});
  h2Late.on("error", () => {});
  const lateStatus = new Promise<number>((resolve) => h2Late.on("response", (headers) => resolve(Number(headers[":status"]))));
  await lateArrived.promise;
  pass(500);
  t.equal(await lateStatus, 504, "an h2 client of the h2c app: 504 too");
  await new Promise((resolve) => h2Late.on("close", resolve));
  await checkRecorded(t, toH2c, "/late-h2", "duration", 504);
});

t.test("a head slower than --idle-timeout is the head timeout's business: the answer comes whole, over HTTP/1.1 and h2", async (t) => {
  const upstream = await startUpstream(t);
  // Three times the idle timeout before the head, with the request all sent.
  let arrived = deferred<ServerResponse>();
  upstream.handle((_req, res) => arrived.resolve(res));
  const { daemon, pass } = await daemonOnClock(t, ["--upstream", upstream.url, "--upstream-protocol", "http1", "--idle-timeout", "300ms"]);
  const answer = streamFrom(daemon.port, "/slow-head");
  const res = await arrived.promise;
  pass(0);
  pass(900);
  res.end("late but fine");
  t.same(await answer, { status: 200, body: "late but fine", complete: true });
  arrived = deferred<ServerResponse>();
  const session = h2Connect(t, daemon.port);
  const stream = session.request({ ":path": "/slow-head-h2" });
  let body = "";
  stream.on("data", (chunk: Buffer) => (body += chunk.toString()));
  const closed = new Promise<number>((resolve) => stream.on("close", () => resolve(stream.rstCode ?? -1)));
  const h2Res = await arrived.promise;
  pass(0);
  pass(900);
  h2Res.end("late but fine");
  const code = await closed;
  t.same([code, body], [http2.constants.NGHTTP2_NO_ERROR, "late but fine"]);
  t.notOk(daemon.logs.records.some((record) => record.timeout !== undefined), "nothing ended by a deadline");
});
