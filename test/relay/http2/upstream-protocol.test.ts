// --upstream-protocol: h2 clients to an HTTP/1.1 app (http1), HTTP/1.1 clients to an h2c app (h2c), and the flag's validation.
import t from "tap";
import { parseCommandLine } from "../../../src/cli.js";
import { h2Connect, h2Request, startH2Upstream, startRefusingH2App } from "../../helpers/h2.js";
import { send } from "../../helpers/http-client.js";
import { startTestDaemon } from "../../helpers/in-process-daemon.js";
import { startUpstream } from "../../helpers/upstream.js";

t.test("--upstream-protocol takes auto, http1 or h2c (flag or env); anything else is a one-line usage error", async (t) => {
  for (const value of ["auto", "http1", "h2c"]) {
    const flag = parseCommandLine(["--upstream-protocol", value], {}, { writeOut: () => {}, writeErr: () => {} });
    t.equal(flag.action === "run" && flag.config.upstreamProtocol, value);
    const env = parseCommandLine([], { READINESS_PROXY_UPSTREAM_PROTOCOL: value }, { writeOut: () => {}, writeErr: () => {} });
    t.equal(env.action === "run" && env.config.upstreamProtocol, value);
  }
  const fallback = parseCommandLine([], {}, { writeOut: () => {}, writeErr: () => {} });
  t.equal(fallback.action === "run" && fallback.config.upstreamProtocol, "auto", "auto by default");
  for (const [argv, env] of [[["--upstream-protocol", "h2"]], [[], { READINESS_PROXY_UPSTREAM_PROTOCOL: "HTTP/2" }]] as const) {
    let err = "";
    const result = parseCommandLine([...argv], { ...env }, { writeOut: () => {}, writeErr: (text) => (err += text) });
    t.same(result, { action: "exit", exitCode: 2 });
    t.equal(err.trim().split("\n").length, 1, "one line");
    // The error names where the value came from: the flag, or the variable (issue 41).
    t.match(err, argv.length > 0 ? /^error: --upstream-protocol: / : /^error: READINESS_PROXY_UPSTREAM_PROTOCOL: /);
  }
});

t.test("http1: an h2 request becomes HTTP/1.1 (:authority as Host, cookie crumbs joined, no te, framing restated)", async (t) => {
  const app = await startUpstream(t);
  app.handle((req, res) => {
    res.setHeader("set-cookie", ["a=1", "b=2"]);
    res.setHeader("connection", "keep-alive");
    res.end(req.url === "/p/empty" ? "" : `got ${req.method}`);
  });
  const daemon = await startTestDaemon(t, ["--upstream", `${app.url}/p`, "--upstream-protocol", "http1"]);
  const session = h2Connect(t, daemon.port);
  const answer = await h2Request(session, { ":method": "POST", ":path": "/x?q=1", ":authority": "svc.example:8443", cookie: ["a=1", "b=2"], te: "trailers", "user-agent": "h2-test" }, "streamed body");
  t.equal(answer.status, 200);
  t.equal(answer.body.toString(), "got POST");
  t.same(answer.headers["set-cookie"], ["a=1", "b=2"], "repeated fields kept");
  t.equal(answer.headers.connection, undefined, "no connection-specific field reaches the h2 client");
  const got = app.received[0]!;
  t.equal(got.url, "/p/x?q=1");
  t.equal(got.headers.host, "svc.example:8443");
  t.equal(got.headers.cookie, "a=1; b=2");
  t.equal(got.headers.te, undefined);
  t.equal(got.headers["transfer-encoding"], "chunked", "no content-length: chunked");
  t.equal(got.headers["x-forwarded-for"], "127.0.0.1");
  t.equal(got.headers["x-forwarded-host"], "svc.example:8443");
  t.equal(got.body.toString(), "streamed body");
  await h2Request(session, { ":method": "PUT", ":path": "/len", "content-length": "3" }, "abc");
  t.equal(app.received[1]!.headers["content-length"], "3");
  const head = await h2Request(session, { ":method": "HEAD", ":path": "/x" });
  t.equal(head.status, 200);
  t.equal(head.body.length, 0);
  const empty = await h2Request(session, { ":path": "/empty" });
  t.equal(empty.status, 200);
  t.equal(empty.body.length, 0);
});

t.test("http1: a gRPC call gets the gRPC error 'upstream speaks HTTP/1.1' and never reaches the app", async (t) => {
  const app = await startUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", app.url, "--upstream-protocol", "http1"]);
  const session = h2Connect(t, daemon.port);
  const answer = await h2Request(session, { ":method": "POST", ":path": "/pkg.Svc/Call", "content-type": "application/grpc", te: "trailers" }, Buffer.alloc(5));
  t.equal(answer.status, 200);
  t.equal(answer.headers["grpc-status"], "14");
  t.equal(decodeURIComponent(String(answer.headers["grpc-message"])), "upstream speaks HTTP/1.1");
  t.equal(app.received.length, 0);
});

t.test("h2c: HTTP/1.1 clients reach an h2c-only app; auto keeps them on HTTP/1.1", async (t) => {
  const app = await startH2Upstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", `${app.url}/base`, "--upstream-protocol", "h2c"]);
  const reply = await send(daemon.port, "/v1?x=1", { method: "POST", headers: { host: "svc.example", "content-type": "text/plain" }, body: "from h1" });
  t.equal(reply.status, 200);
  t.equal(reply.text(), "ok");
  const got = app.received[0]!;
  t.equal(got.headers[":path"], "/base/v1?x=1");
  t.equal(got.headers[":authority"], "svc.example");
  t.equal(got.headers["x-forwarded-host"], "svc.example");
  t.equal(got.body.toString(), "from h1");
  t.equal(got.headers.connection, undefined);
  const h2 = await h2Request(h2Connect(t, daemon.port), { ":path": "/from-h2" });
  t.equal(h2.status, 200, "h2 clients too");

  const auto = await startTestDaemon(t, ["--upstream", app.url]);
  t.equal((await send(auto.port, "/x")).status, 502, "auto: an HTTP/1.1 client is sent HTTP/1.1, which this app does not speak");
});

t.test("h2c: an HTTP/1.1 request the app refused (REFUSED_STREAM, or above its GOAWAY's last stream id) is sent again with its body, as an h2 one is", async (t) => {
  const { url, seen } = await startRefusingH2App(t);
  const daemon = await startTestDaemon(t, ["--upstream", url, "--upstream-protocol", "h2c"]);
  // A stream before the others, so that a GOAWAY's last id (the stream's own minus 2) is a real one.
  t.equal((await send(daemon.port, "/first")).status, 200);
  const body = "x".repeat(10_000);
  for (const [path, options] of [
    ["/refuse", {}],
    ["/goaway", {}],
    ["/refuse-post", { method: "POST", body }],
    ["/goaway-post", { method: "POST", body }],
  ] as const) {
    const reply = await send(daemon.port, path, options);
    t.equal(reply.status, 200, `${path}: sent again on a stream the app took`);
    t.equal(reply.text(), `${path}: ${"body" in options ? body.length : 0} bytes`, `${path}: with its whole body`);
  }
  t.same(seen, ["/first", "/refuse", "/refuse", "/goaway", "/goaway", "/refuse-post", "/refuse-post", "/goaway-post", "/goaway-post"], "each reached the app twice");

  // A body past what is kept (64 KiB) cannot go again: the refusal is a 502.
  const big = await send(daemon.port, "/refuse-big", { method: "POST", body: "y".repeat(200_000) });
  t.equal(big.status, 502);
  t.equal(seen.filter((one) => one === "/refuse-big").length, 1, "not sent again");
});
