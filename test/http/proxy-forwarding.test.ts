// Proxy pass-through on real sockets: method, path and query byte for byte, bodies, statuses, hop-by-hop rules, X-Forwarded-*.
import { spawn, spawnSync } from "node:child_process";
import { request } from "node:http";
import { connect } from "node:net";
import t from "tap";
import { send } from "../helpers/http-client.js";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { startUpstream } from "../helpers/upstream.js";

t.test("method, path and query arrive byte for byte; status and body come back", async (t) => {
  const upstream = await startUpstream(t);
  upstream.handle((_req, res, body) => {
    res.writeHead(201, { "x-upstream": "yes", "set-cookie": ["a=1", "b=2"] });
    res.end(body);
  });
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  const paths = ["/a%2Fb/../c?x=%2F&y", "/v1/chat/completions", "/?", "/%7Euser/%zz?q=a+b#frag", "//double//slash"];
  for (const path of paths) {
    const reply = await send(daemon.port, path, { method: "PATCH", body: "payload" });
    t.equal(reply.status, 201);
    t.equal(reply.text(), "payload");
    t.equal(reply.headers["x-upstream"], "yes");
    t.same(reply.headers["set-cookie"], ["a=1", "b=2"], "repeated headers stay separate");
    t.equal(upstream.received.at(-1)?.url, path, `upstream saw ${path}`);
    t.equal(upstream.received.at(-1)?.method, "PATCH");
  }
});

t.test("a path prefix in --upstream is kept in front", async (t) => {
  const upstream = await startUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", `${upstream.url}/api/`]);
  await send(daemon.port, "/v1/models?limit=2");
  t.equal(upstream.received.at(-1)?.url, "/api/v1/models?limit=2");
});

t.test("upstream statuses and error bodies pass through untouched", async (t) => {
  const upstream = await startUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  for (const status of [200, 204, 301, 404, 429, 500, 502, 503, 504]) {
    const body = status === 204 ? "" : `{"upstream":"own body ${status}"}`;
    upstream.handle((_req, res) => {
      res.writeHead(status, { "content-type": "application/json", location: "/elsewhere" });
      res.end(body);
    });
    for (const accept of ["*/*", "text/html,application/xhtml+xml"]) {
      const reply = await send(daemon.port, "/x", { headers: { accept } });
      t.equal(reply.status, status, `${status} with ${accept}`);
      t.equal(reply.text(), body, `${status} body untouched`);
    }
  }
});

t.test("large and chunked request bodies stream through", async (t) => {
  const upstream = await startUpstream(t);
  upstream.handle((req, res, body) => res.end(`${body.length} ${req.headers["transfer-encoding"] ?? "sized"}`));
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  const big = Buffer.alloc(3 * 1024 * 1024, 7);
  t.equal((await send(daemon.port, "/upload", { method: "POST", body: big })).text(), `${big.length} sized`);
  const chunked = await new Promise<string>((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port: daemon.port, path: "/upload", method: "POST", agent: false }, (res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => (text += chunk.toString()));
      res.on("end", () => resolve(text));
    });
    req.on("error", reject);
    for (let index = 0; index < 100; index++) req.write(Buffer.alloc(10_000, index));
    req.end();
  });
  t.equal(chunked, "1000000 chunked");
});

t.test("Expect: 100-continue works end to end", async (t) => {
  const upstream = await startUpstream(t);
  upstream.handle((_req, res, body) => res.end(`got ${body.length}`));
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  const body = Buffer.alloc(2 * 1024 * 1024, 1);
  const reply = await new Promise<{ sawContinue: boolean; text: string; status: number }>((resolve, reject) => {
    let sawContinue = false;
    const req = request({
      host: "127.0.0.1",
      port: daemon.port,
      path: "/upload",
      method: "POST",
      agent: false,
      headers: { expect: "100-continue", "content-length": body.length },
    });
    req.on("continue", () => {
      sawContinue = true;
      req.end(body);
    });
    req.on("response", (res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => (text += chunk.toString()));
      res.on("end", () => resolve({ sawContinue, text, status: res.statusCode ?? 0 }));
    });
    req.on("error", reject);
  });
  t.same(reply, { sawContinue: true, text: `got ${body.length}`, status: 200 });
  t.equal(upstream.received.at(-1)?.headers.expect, undefined, "the expectation is not forwarded");

  const hasCurl = spawnSync("curl", ["--version"]).status === 0;
  await t.test("curl's 3 MB upload (it sends Expect: 100-continue)", { skip: !hasCurl && "curl is not installed" }, async (t) => {
    // Asynchronously: the daemon under test runs in this process's event loop.
    const curlUpload = spawn("curl", ["-sS", "-w", " %{http_code}", "--data-binary", "@-", `http://127.0.0.1:${daemon.port}/upload`]);
    let output = "";
    curlUpload.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    curlUpload.stdin.end(Buffer.alloc(3 * 1024 * 1024, 2));
    await new Promise((resolve) => curlUpload.on("close", resolve));
    t.equal(output, `got ${3 * 1024 * 1024} 200`);
  });
});

t.test("hop-by-hop headers are removed both ways; Host kept; X-Forwarded-* appended", async (t) => {
  const upstream = await startUpstream(t);
  upstream.handle((_req, res) => {
    res.writeHead(200, [
      "Connection", "X-Internal, keep-alive",
      "X-Internal", "secret",
      "Keep-Alive", "timeout=5",
      "Proxy-Connection", "keep-alive",
      "Trailer", "X-Checksum",
      "X-Kept", "visible",
    ]);
    res.end("ok");
  });
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  // Raw bytes, so that headers no client library would send still reach the proxy.
  const response = await new Promise<string>((resolve, reject) => {
    const socket = connect(daemon.port, "127.0.0.1", () => {
      socket.write(
        "GET /hop HTTP/1.1\r\n" +
          "Host: app.example:8443\r\n" +
          "Connection: X-Secret, close\r\n" +
          "X-Secret: do-not-forward\r\n" +
          "Keep-Alive: timeout=5\r\n" +
          "Proxy-Connection: keep-alive\r\n" +
          "TE: trailers\r\n" +
          "Trailer: X-Sum\r\n" +
          "Upgrade: h2c\r\n" +
          "X-Forwarded-For: 203.0.113.7\r\n" +
          "X-Forwarded-Proto: https\r\n" +
          "X-Forwarded-Host: public.example\r\n" +
          "X-Kept: yes\r\n\r\n",
      );
    });
    let text = "";
    socket.on("data", (chunk) => (text += chunk.toString()));
    socket.on("end", () => resolve(text));
    socket.on("error", reject);
  });
  const seen = upstream.received.at(-1)!;
  const names = seen.rawHeaders.filter((_, index) => index % 2 === 0).map((name) => name.toLowerCase());
  for (const removed of ["x-secret", "keep-alive", "proxy-connection", "te", "trailer", "upgrade"]) {
    t.notOk(names.includes(removed), `request: ${removed} removed`);
  }
  t.not(seen.headers.connection, "X-Secret, close", "the client's Connection is not forwarded");
  t.equal(seen.headers.host, "app.example:8443", "Host kept");
  t.equal(seen.headers["x-kept"], "yes");
  t.equal(seen.headers["x-forwarded-for"], "203.0.113.7, 127.0.0.1");
  t.equal(seen.headers["x-forwarded-proto"], "https, http");
  t.equal(seen.headers["x-forwarded-host"], "public.example, app.example:8443");
  const head = response.split("\r\n\r\n")[0]!.toLowerCase();
  t.match(head, /^http\/1\.1 200/);
  t.match(head, /x-kept: visible/);
  for (const removed of ["x-internal", "proxy-connection", "trailer:", "keep-alive: timeout=5"]) {
    t.notMatch(head, removed, `response: ${removed} removed`);
  }
});

t.test("X-Forwarded-* are set when the client sent none", async (t) => {
  const upstream = await startUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  await send(daemon.port, "/", { headers: { host: "svc.local" } });
  const seen = upstream.received.at(-1)!;
  t.equal(seen.headers["x-forwarded-for"], "127.0.0.1");
  t.equal(seen.headers["x-forwarded-proto"], "http");
  t.equal(seen.headers["x-forwarded-host"], "svc.local");
});

/** Sends raw request bytes on a fresh connection and returns everything until the proxy ends it. */
function rawRequest(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(bytes));
    let text = "";
    socket.on("data", (chunk) => (text += chunk.toString()));
    socket.on("end", () => resolve(text));
    socket.on("error", reject);
  });
}

t.test("absolute-form targets are accepted as nginx does: the authority becomes the Host, the path is forwarded", async (t) => {
  const upstream = await startUpstream(t);
  upstream.handle((req, res) => res.end(`${req.url} host=${req.headers.host} xfh=${req.headers["x-forwarded-host"]}`));
  const daemon = await startTestDaemon(t, ["--upstream", `${upstream.url}/prefix`]);
  for (const [target, expected] of [
    ["http://app.example/x?y=1", "/prefix/x?y=1 host=app.example xfh=app.example"],
    ["HTTP://app.example:8443", "/prefix/ host=app.example:8443 xfh=app.example:8443"],
    ["http://app.example?q", "/prefix/?q host=app.example xfh=app.example"],
    ["https://app.example/a%2Fb", "/prefix/a%2Fb host=app.example xfh=app.example"],
  ] as const) {
    const response = await rawRequest(daemon.port, `GET ${target} HTTP/1.1\r\nHost: ignored.example\r\nConnection: close\r\n\r\n`);
    t.match(response, /^HTTP\/1\.1 200 /, target);
    t.match(response, new RegExp(`\\r\\n\\r\\n${expected.replace(/[?.]/g, "\\$&")}$`), `${target}: the received Host is replaced by the authority`);
  }
});

t.test("a target that is neither a path nor absolute-form is a 400; OPTIONS * is answered by the proxy", async (t) => {
  const upstream = await startUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  for (const target of ["http://user:pw@app.example/", "http:///x", "ftp://app.example/", "*"]) {
    const response = await rawRequest(daemon.port, `GET ${target} HTTP/1.1\r\nHost: a\r\n\r\n`);
    t.match(response, /^HTTP\/1\.1 400 /, target);
    t.match(response, /"message":"bad request target"/);
  }
  const options = await rawRequest(daemon.port, "OPTIONS * HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
  t.match(options, /^HTTP\/1\.1 200 /);
  t.match(options, /\r\ncontent-length: 0\r\n/i);
  t.equal(upstream.received.length, 0);
});
