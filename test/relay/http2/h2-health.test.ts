// Every health path of CONTRACT §2 over h2c prior knowledge (curl), answered as over HTTP/1.1: status, headers and body; HTTP/1.1 on the same port unchanged.
import { once } from "node:events";
import { connect } from "node:net";
import { join } from "node:path";
import t from "tap";
import { curlH2, curlH2Missing } from "../../helpers/curl-h2.js";
import { h2Connect, h2Request } from "../../helpers/h2.js";
import { send } from "../../helpers/http-client.js";
import { startTestDaemon } from "../../helpers/in-process-daemon.js";

const fixtures = join(import.meta.dirname, "../../../proc-fixtures");
/** Fields that belong to the connection or the moment, not the answer. */
const CONNECTION_FIELDS = new Set(["connection", "keep-alive", "date"]);

const PATHS = [
  "/health",
  "/healthz",
  "/healthz?verbose=1",
  "/readyz",
  "/readyz?verbose",
  "/readyz?exclude=listener-15008",
  "/readyz?verbose&exclude=listener-15008&exclude=nope",
  "/readyz/listener-15008",
  "/readyz/listener-8000",
  "/readyz/shutdown",
  "/readyz/nope",
  "/readyz/",
];

const curlMissing = await curlH2Missing();

t.test("curl --http2-prior-knowledge gets what HTTP/1.1 gets on every health path", { skip: curlMissing }, async (t) => {
  const daemon = await startTestDaemon(t, ["--proc-root", join(fixtures, "listen-tcp-only"), "--readiness-required-listener", "15008", "--readiness-required-listener", "8000"]);
  for (const path of PATHS) {
    for (const method of ["GET", "HEAD"]) {
      const overH1 = await send(daemon.port, path, { method });
      const overH2 = await curlH2(daemon.port, path, method === "HEAD" ? ["-I"] : []);
      t.equal(overH2.version, "HTTP/2", `${method} ${path}: spoken in h2`);
      t.equal(overH2.status, overH1.status, `${method} ${path}: status`);
      t.equal(overH2.body, overH1.text(), `${method} ${path}: body`);
      const h1Fields = Object.fromEntries(Object.entries(overH1.headers).filter(([name]) => !CONNECTION_FIELDS.has(name)));
      const h2Fields = Object.fromEntries(Object.entries(overH2.headers).filter(([name]) => !CONNECTION_FIELDS.has(name)));
      t.same(h2Fields, h1Fields, `${method} ${path}: fields`);
      t.ok(overH2.headers.date, `${method} ${path}: dated`);
    }
  }
});

t.test("over h2, a /readyz/<x> that names no check is ours: 404 with the configured names, never the app's", async (t) => {
  const daemon = await startTestDaemon(t, ["--proc-root", join(fixtures, "listen-tcp-only"), "--readiness-required-listener", "15008"]);
  const session = h2Connect(t, daemon.port);
  for (const path of ["/readyz/listener-9000", "/readyz/", "/readyz/Shutdown?verbose"]) {
    const answer = await h2Request(session, { ":path": path });
    t.equal(answer.status, 404, path);
    t.equal(answer.headers["content-type"], "application/json", `${path}: JSON`);
    t.equal(answer.body.toString(), '{"error":"no such check","checks":["listener-15008","shutdown"]}', `${path}: the configured names`);
  }
});

t.test("health paths over h2 answer the browser's 503 page and the draining verdict as HTTP/1.1 does", async (t) => {
  const daemon = await startTestDaemon(t, ["--proc-root", join(fixtures, "header-only"), "--readiness-required-listener", "15008"]);
  const session = h2Connect(t, daemon.port);
  const page = await h2Request(session, { ":path": "/readyz", accept: "text/html" });
  t.equal(page.status, 503);
  t.match(page.headers["content-type"], /^text\/html/);
  t.match(page.body.toString(), /<html/i);
  const draining = daemon.shutdown.run("SIGTERM");
  const answer = await h2Request(session, { ":path": "/readyz" });
  t.equal(answer.status, 503);
  t.same(JSON.parse(answer.body.toString()), { status: "not ready", missingListeners: [15008], draining: true, failedChecks: ["listener-15008", "shutdown"] });
  await draining;
});

t.test("HTTP/1.1 on the same port is unchanged beside h2 connections", async (t) => {
  const daemon = await startTestDaemon(t, []);
  const session = h2Connect(t, daemon.port);
  t.equal((await h2Request(session, { ":path": "/healthz" })).status, 200);
  const reply = await send(daemon.port, "/healthz");
  t.equal(reply.status, 200);
  t.equal(reply.text(), '{"status":"ok"}');
  t.equal((await h2Request(session, { ":path": "/health" })).status, 200, "the h2 connection still serves");
  // The preface after an HTTP/1.1 request is not prior knowledge: that connection does not switch.
  const raw = connect(daemon.port, "127.0.0.1");
  raw.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  const chunks: Buffer[] = [];
  raw.on("data", (chunk: Buffer) => {
    chunks.push(chunk);
    if (chunks.length === 1) raw.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
  });
  await once(raw, "close");
  const text = Buffer.concat(chunks).toString("latin1");
  t.match(text, /^HTTP\/1\.1 200 OK\r\n/, "the HTTP/1.1 request answered");
  t.match(text, /\r\n\r\n\{"status":"ok"\}HTTP\/1\.1 400 Bad Request\r\n/, "then the preface refused as HTTP/1.1");
});
