// Hostile h2c clients in raw frames (test/helpers/h2-hostile.py): malformed requests are stream errors that never reach the app, floods end the connection with GOAWAY and reach the app bounded.
import { execFile } from "node:child_process";
import { join } from "node:path";
import t from "tap";
import { startH2Upstream } from "../../helpers/h2.js";
import { startTestDaemon } from "../../helpers/in-process-daemon.js";
import { startUpstream } from "../../helpers/upstream.js";

const PYTHON = "/usr/bin/python3";
const HOSTILE = join(import.meta.dirname, "../../helpers/h2-hostile.py");
const missing = await new Promise<string | false>((resolve) => execFile(PYTHON, ["-c", "import hpack"], (error) => resolve(error ? "python3-h2 is not installed (apt-get install python3-h2)" : false)));

interface Outcome {
  goaway: number | null;
  rst: Record<string, number>;
  status: Record<string, number>;
  closed: boolean;
  sendFailed: boolean;
}

function hostile(port: number, scenario: string): Promise<Outcome> {
  return new Promise((resolve, reject) =>
    execFile(PYTHON, [HOSTILE, String(port), scenario], { timeout: 60_000, maxBuffer: 16 << 20 }, (error, stdout, stderr) => (error ? reject(new Error(`${scenario}: ${stderr}`)) : resolve(JSON.parse(stdout) as Outcome))),
  );
}

/** Refused by nghttp2 itself: RST_STREAM PROTOCOL_ERROR, the connection serves on. */
const NGHTTP2_REFUSES = [
  "uppercase-name",
  "connection-header",
  "keep-alive-header",
  "transfer-encoding",
  "upgrade-header",
  "te-gzip",
  "missing-path",
  "duplicate-method",
  "pseudo-after-regular",
  "unknown-pseudo",
  "response-pseudo",
  "content-length-longer",
  "content-length-shorter",
  // Refused by the proxy (h2-listener.ts): what would split an HTTP/1.1 request line or Host.
  "space-in-path",
  "space-in-method",
  "space-in-authority",
  "non-ascii-path",
];

t.test("malformed requests are stream errors and never reach the app as requests", { skip: missing }, async (t) => {
  const app = await startH2Upstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", app.url]);
  const http1App = await startUpstream(t);
  const downgrading = await startTestDaemon(t, ["--upstream", http1App.url, "--upstream-protocol", "http1"]);
  for (const name of NGHTTP2_REFUSES) {
    const outcome = await hostile(downgrading.port, `malformed:${name}`);
    t.ok(outcome.rst["1"] === 1 || outcome.goaway !== null, `${name} to an HTTP/1.1 app: refused (RST_STREAM PROTOCOL_ERROR ${outcome.rst["1"]}, GOAWAY ${outcome.goaway})`);
    t.equal(outcome.rst["1"], 1, `${name} to an HTTP/1.1 app: RST_STREAM PROTOCOL_ERROR`);
    t.equal(outcome.status["3"], 200, `${name} to an HTTP/1.1 app: the next request is served`);
  }
  t.same(http1App.received.map((request) => request.url).filter((url) => !url.startsWith("/after") && url !== "/x"), [], "only well-formed requests reached the HTTP/1.1 app");
  for (const name of NGHTTP2_REFUSES) {
    const outcome = await hostile(daemon.port, `malformed:${name}`);
    t.ok(outcome.rst["1"] === 1 || outcome.goaway !== null, `${name}: refused (RST_STREAM PROTOCOL_ERROR ${outcome.rst["1"]}, GOAWAY ${outcome.goaway})`);
    t.equal(outcome.rst["1"], 1, `${name}: RST_STREAM PROTOCOL_ERROR`);
    t.equal(outcome.goaway, null, `${name}: not a connection error`);
    t.equal(outcome.status["3"], 200, `${name}: the next request on the connection is served`);
  }
  const reached = app.received.map((request) => String(request.headers[":path"])).filter((path) => path.startsWith("/malformed"));
  t.same(reached, [], "no malformed request reached the app whole");
  // CR, LF or NUL in a value: nghttp2 drops the field (the request goes on without it); it never reaches the app.
  for (const name of ["cr-in-value", "lf-in-value", "nul-in-value"]) {
    const outcome = await hostile(daemon.port, `malformed:${name}`);
    t.equal(outcome.status["3"], 200, `${name}: the connection serves on`);
  }
  t.notOk(app.received.some((request) => "x-bad" in request.headers), "no field with CR, LF or NUL reached the app");
});

t.test("a header list over 16 KiB gets 431 and is not forwarded", { skip: missing }, async (t) => {
  const app = await startH2Upstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", app.url]);
  const outcome = await hostile(daemon.port, "header-list");
  t.equal(outcome.status["1"], 431);
  t.equal(outcome.status["3"], 200, "the connection serves on");
  t.notOk(app.received.some((request) => request.headers[":path"] === "/big-headers"));
});

t.test("more streams than SETTINGS_MAX_CONCURRENT_STREAMS (100): the app sees at most 100", { skip: missing }, async (t) => {
  const app = await startH2Upstream(t);
  app.handle(() => {});
  const daemon = await startTestDaemon(t, ["--upstream", app.url]);
  const outcome = await hostile(daemon.port, "too-many-streams");
  // nghttp2 treats a stream above an acknowledged limit as a connection error (RFC 9113 §5.1.2 allows it).
  t.ok(outcome.rst["201"] !== undefined || outcome.goaway !== null, "the 101st stream refused, or the connection ended");
  t.ok(app.opened <= 100, `the app saw ${app.opened} streams`);
});

t.test("floods end the connection with GOAWAY and reach the app bounded", { skip: missing }, async (t) => {
  const app = await startH2Upstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", app.url]);
  for (const scenario of ["rapid-reset", "continuation-flood", "settings-flood", "ping-flood", "empty-data-flood"]) {
    const before = app.opened;
    const outcome = await hostile(daemon.port, scenario);
    t.ok(outcome.goaway !== null || outcome.closed || outcome.sendFailed, `${scenario}: the connection was ended (GOAWAY ${outcome.goaway})`);
    t.ok(app.opened - before <= 2000, `${scenario}: ${app.opened - before} streams reached the app (20000 sent at most)`);
  }
  // The proxy serves on after all of it.
  const healthy = await hostile(daemon.port, "malformed:none");
  t.equal(healthy.status["3"], 200, "a fresh connection is served");
});
