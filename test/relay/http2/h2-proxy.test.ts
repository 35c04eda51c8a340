// h2 streams relayed to an h2c app (node:http2): head and X-Forwarded-*, trailers both ways, resets both ways, SETTINGS and GOAWAY honoured, 502 and 504 per stream.
import http2 from "node:http2";
import t from "tap";
import { h2Connect, h2Request, startH2Upstream, startRefusingH2App } from "../../helpers/h2.js";
import { startTestDaemon } from "../../helpers/in-process-daemon.js";

const { NGHTTP2_CANCEL, NGHTTP2_INTERNAL_ERROR, NGHTTP2_REFUSED_STREAM } = http2.constants;

t.test("the request reaches the app with :authority, the path prefix, te: trailers and X-Forwarded-*", async (t) => {
  const app = await startH2Upstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", `${app.url}/base`]);
  const session = h2Connect(t, daemon.port);
  const answer = await h2Request(session, { ":method": "POST", ":path": "/v1/items?x=1", ":authority": "svc.example", te: "trailers", "x-forwarded-for": "10.1.1.1", cookie: ["a=1", "b=2"], "x-request-id": "req-1" }, "body!");
  t.equal(answer.status, 200);
  t.equal(answer.body.toString(), "ok");
  const got = app.received[0]!.headers;
  t.equal(got[":path"], "/base/v1/items?x=1");
  t.equal(got[":authority"], "svc.example");
  t.equal(got.te, "trailers");
  t.equal(got["x-forwarded-for"], "10.1.1.1, 127.0.0.1");
  t.equal(got["x-forwarded-proto"], "http");
  t.equal(got["x-forwarded-host"], "svc.example");
  t.equal(got["x-request-id"], "req-1");
  t.equal(app.received[0]!.body.toString(), "body!");
});

t.test("trailers are relayed both ways; the app's response trailers reach the client", async (t) => {
  const app = await startH2Upstream(t);
  let requestTrailers: http2.IncomingHttpHeaders | undefined;
  app.handle((stream) => {
    stream.on("trailers", (trailers) => (requestTrailers = trailers));
    stream.resume();
    stream.on("end", () => {
      stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
      stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0", "x-app": "yes" }));
      stream.end(Buffer.from([0, 0, 0, 0, 0]));
    });
  });
  const daemon = await startTestDaemon(t, ["--upstream", app.url]);
  const session = h2Connect(t, daemon.port);
  const answer = await new Promise<{ trailers: http2.IncomingHttpHeaders | undefined; body: Buffer }>((resolve) => {
    const stream = session.request({ ":method": "POST", ":path": "/t", "content-type": "application/grpc", te: "trailers" }, { waitForTrailers: true });
    stream.on("wantTrailers", () => stream.sendTrailers({ "x-client-trailer": "sent" }));
    let trailers: http2.IncomingHttpHeaders | undefined;
    const chunks: Buffer[] = [];
    stream.on("trailers", (received) => (trailers = received));
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("close", () => resolve({ trailers, body: Buffer.concat(chunks) }));
    stream.end(Buffer.from([0, 0, 0, 0, 0]));
  });
  t.equal(requestTrailers?.["x-client-trailer"], "sent", "the client's trailers reached the app");
  t.equal(answer.trailers?.["grpc-status"], "0");
  t.equal(answer.trailers?.["x-app"], "yes");
  t.equal(answer.body.length, 5);
});

t.test("a client's RST_STREAM resets the app's stream; a closing client connection resets all of its streams", async (t) => {
  const app = await startH2Upstream(t);
  const closed: number[] = [];
  let arrived = 0;
  let onArrived = (): void => {};
  app.handle((stream) => {
    stream.on("close", () => closed.push(stream.rstCode ?? -1));
    arrived++;
    onArrived();
    stream.respond({ ":status": 200 });
    stream.write("first");
  });
  const daemon = await startTestDaemon(t, ["--upstream", app.url]);
  const session = h2Connect(t, daemon.port);
  const stream = session.request({ ":path": "/stream" });
  stream.on("error", () => {});
  await new Promise<void>((resolve) => stream.once("data", () => resolve()));
  const appClosed = new Promise<void>((resolve) => app.handle((s) => s.on("close", resolve)));
  void appClosed;
  stream.close(NGHTTP2_CANCEL);
  await t.resolves(waitFor(() => closed.length === 1), "the app's stream closed");
  t.equal(closed[0], NGHTTP2_CANCEL, "with CANCEL");

  app.handle((s) => {
    s.on("close", () => closed.push(s.rstCode ?? -1));
    arrived++;
    onArrived();
    s.respond({ ":status": 200 });
    s.write("first");
  });
  const second = h2Connect(t, daemon.port);
  const all = new Promise<void>((resolve) => (onArrived = () => arrived === 4 && resolve()));
  for (let index = 0; index < 3; index++) second.request({ ":path": `/s${index}` }).on("error", () => {});
  await all;
  second.destroy();
  await t.resolves(waitFor(() => closed.length === 4), "every app stream of the closed connection was reset");
  t.ok(closed.slice(1).every((code) => code !== 0), "reset, not ended");
});

t.test("the app's reset after its head resets the client's stream; before it, the client gets 502", async (t) => {
  const app = await startH2Upstream(t);
  app.handle((stream, headers) => {
    if (headers[":path"] === "/before") {
      stream.close(NGHTTP2_INTERNAL_ERROR);
      return;
    }
    stream.respond({ ":status": 200 });
    stream.write("partial", () => stream.destroy(new Error("app failed mid-response")));
  });
  const daemon = await startTestDaemon(t, ["--upstream", app.url]);
  const session = h2Connect(t, daemon.port);
  const before = await h2Request(session, { ":path": "/before" });
  t.equal(before.status, 502);
  t.match(JSON.parse(before.body.toString()), { error: { code: 502, message: "upstream unavailable" } });
  const after = await h2Request(session, { ":path": "/after" });
  t.equal(after.status, 200);
  t.equal(after.rstCode, NGHTTP2_INTERNAL_ERROR, "the client's stream was reset, never ended cleanly");
});

t.test("SETTINGS_MAX_CONCURRENT_STREAMS of the app is honoured; REFUSED_STREAM is sent again", async (t) => {
  const app = await startH2Upstream(t, { maxConcurrentStreams: 2 });
  let open = 0;
  let most = 0;
  let refusedOnce = false;
  const held: http2.ServerHttp2Stream[] = [];
  app.handle((stream, headers) => {
    if (headers[":path"] === "/refuse" && !refusedOnce) {
      refusedOnce = true;
      stream.close(NGHTTP2_REFUSED_STREAM);
      return;
    }
    open++;
    most = Math.max(most, open);
    stream.on("close", () => open--);
    held.push(stream);
    // Answered once two are open: a pool that sent a third would wait forever behind them.
    if (held.length >= 2 || headers[":path"] === "/refuse") for (const waiting of held.splice(0)) answer(waiting);
    function answer(s: http2.ServerHttp2Stream): void {
      s.respond({ ":status": 200 });
      s.end("done");
    }
  });
  const daemon = await startTestDaemon(t, ["--upstream", app.url]);
  const session = h2Connect(t, daemon.port);
  const answers = await Promise.all(Array.from({ length: 6 }, (_, index) => h2Request(session, { ":path": `/c${index}` })));
  t.same(answers.map((answer) => answer.status), [200, 200, 200, 200, 200, 200]);
  t.ok(most <= 2, `the app never saw more than 2 streams open on one session (saw ${most})`);
  const refused = await h2Request(session, { ":path": "/refuse" });
  t.equal(refused.status, 200, "a refused stream was sent again and answered");
});

t.test("a refused stream goes again with its body (a gRPC call, a POST), within 64 KiB; a longer body's refusal is a 502", async (t) => {
  const { url, seen } = await startRefusingH2App(t);
  const daemon = await startTestDaemon(t, ["--upstream", url]);
  const session = h2Connect(t, daemon.port);
  t.equal((await h2Request(session, { ":path": "/first" })).status, 200);
  const message = Buffer.concat([Buffer.from([0, 0, 0, 0, 20]), Buffer.alloc(20, 1)]);
  for (const path of ["/svc/Refuse", "/svc/goaway"]) {
    const call = await h2Request(session, { ":method": "POST", ":path": path, "content-type": "application/grpc", te: "trailers" }, message);
    t.equal(call.status, 200, `${path}: sent again`);
    t.equal(call.body.toString(), `${path}: 25 bytes`, `${path}: with the whole message`);
  }
  const post = await h2Request(session, { ":method": "POST", ":path": "/form" }, "z".repeat(30_000));
  t.equal(post.body.toString(), "/form: 30000 bytes", "a POST of 30,000 bytes too");
  const big = await h2Request(session, { ":method": "POST", ":path": "/big" }, "z".repeat(200_000));
  t.equal(big.status, 502, "past the 64 KiB kept, a refusal cannot be sent again");
  t.same(seen, ["/first", "/svc/Refuse", "/svc/Refuse", "/svc/goaway", "/svc/goaway", "/form", "/form", "/big"]);
});

t.test("GOAWAY from the app: the session is not reused, later streams go on a new one", async (t) => {
  const app = await startH2Upstream(t);
  let sessions = 0;
  const seen = new Set<http2.Http2Session>();
  app.handle((stream) => {
    if (!seen.has(stream.session!)) {
      seen.add(stream.session!);
      sessions++;
    }
    stream.respond({ ":status": 200 });
    stream.end("ok");
    stream.session!.goaway(0, stream.id);
  });
  const daemon = await startTestDaemon(t, ["--upstream", app.url]);
  const session = h2Connect(t, daemon.port);
  for (let index = 0; index < 3; index++) t.equal((await h2Request(session, { ":path": `/g${index}` })).status, 200);
  t.equal(sessions, 3, "one session per request after each GOAWAY");
});

t.test("502 when the app is unreachable, 504 when its response HEADERS are late; gRPC calls get the gRPC form", async (t) => {
  const app = await startH2Upstream(t);
  app.handle(() => {});
  const slow = await startTestDaemon(t, ["--upstream", app.url, "--response-header-timeout", "200ms"]);
  const session = h2Connect(t, slow.port);
  const late = await h2Request(session, { ":path": "/late" });
  t.equal(late.status, 504);
  t.match(JSON.parse(late.body.toString()), { error: { code: 504 } });
  const grpcLate = await h2Request(session, { ":method": "POST", ":path": "/svc/M", "content-type": "application/grpc" }, Buffer.alloc(5));
  t.equal(grpcLate.status, 200);
  t.equal(grpcLate.headers["grpc-status"], "14");
  t.equal(grpcLate.headers["content-type"], "application/grpc");

  const gone = await startTestDaemon(t, ["--upstream", "http://127.0.0.1:1"]);
  const other = h2Connect(t, gone.port);
  t.equal((await h2Request(other, { ":path": "/x" })).status, 502);
  const grpcGone = await h2Request(other, { ":method": "POST", ":path": "/svc/M", "content-type": "application/grpc+proto" }, Buffer.alloc(5));
  t.equal(grpcGone.headers["grpc-status"], "14");
  t.equal(grpcGone.headers["grpc-message"], "upstream%20unavailable");
});

/** Resolves once `condition` holds, checked on each turn of the event loop (bounded). */
async function waitFor(condition: () => boolean): Promise<void> {
  for (let turn = 0; turn < 5000 && !condition(); turn++) await new Promise((resolve) => setImmediate(resolve));
  if (!condition()) throw new Error("condition not met");
}

t.test("metrics: each h2 stream counts as one request; health paths over h2 do not", async (t) => {
  const { scrapeText, seriesValue } = await import("../../helpers/scrape.js");
  const app = await startH2Upstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", app.url, "--metrics-listen", "127.0.0.1:0"]);
  const session = h2Connect(t, daemon.port);
  await Promise.all([h2Request(session, { ":path": "/a" }), h2Request(session, { ":path": "/b" }), h2Request(session, { ":path": "/c", ":method": "POST" }, "x")]);
  await h2Request(session, { ":path": "/healthz" });
  const text = await scrapeText(daemon.metricsPort!);
  t.equal(seriesValue(text, 'readiness_proxy_requests_total{code="200",method="GET"}'), 2);
  t.equal(seriesValue(text, 'readiness_proxy_requests_total{code="200",method="POST"}'), 1);
  t.equal(seriesValue(text, "readiness_proxy_requests_in_flight"), 0);
});
