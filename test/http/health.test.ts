// /health, /healthz and /readyz on a real server: exact bodies, headers, HEAD, paths that belong to the upstream.
import { join } from "node:path";
import t from "tap";
import type { TableReader } from "../../src/procfs/listener-scan.js";
import { send } from "../helpers/http-client.js";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { startUpstream } from "../helpers/upstream.js";

const fixtures = join(import.meta.dirname, "../../proc-fixtures");

t.test("liveness: 200 ok, whatever readiness says", async (t) => {
  const daemon = await startTestDaemon(t, ["--proc-root", join(fixtures, "header-only"), "--readiness-required-listener", "15008"]);
  for (const path of ["/health", "/healthz", "/healthz?verbose=1"]) {
    const reply = await send(daemon.port, path);
    t.equal(reply.status, 200, path);
    t.equal(reply.headers["content-type"], "application/json");
    t.equal(reply.text(), '{"status":"ok"}');
  }
  t.equal((await send(daemon.port, "/readyz")).status, 503, "while not ready");
  const head = await send(daemon.port, "/health", { method: "HEAD" });
  t.equal(head.status, 200);
  t.equal(head.body.length, 0);
});

t.test("/readyz for each verdict over a --proc-root fixture", async (t) => {
  const cases: Array<[string, number, string]> = [
    ["listen-tcp-only", 200, '{"status":"ready"}'],
    ["listen-tcp6-only", 200, '{"status":"ready"}'],
    ["established-only", 503, '{"status":"not ready","missingListeners":[15008],"failedChecks":["listener-15008"]}'],
    ["time-wait", 503, '{"status":"not ready","missingListeners":[15008],"failedChecks":["listener-15008"]}'],
    ["header-only", 503, '{"status":"not ready","missingListeners":[15008],"failedChecks":["listener-15008"]}'],
    ["tcp6-missing", 200, '{"status":"ready"}'],
    ["malformed-header", 200, '{"status":"ready"}'],
    ["unreadable", 200, '{"status":"ready"}'],
    ["missing-while-other-unreadable", 200, '{"status":"ready"}'],
    ["found-while-other-unreadable", 200, '{"status":"ready"}'],
  ];
  for (const [fixture, status, body] of cases) {
    const daemon = await startTestDaemon(t, ["--proc-root", join(fixtures, fixture), "--readiness-required-listener=15008"]);
    const reply = await send(daemon.port, "/readyz");
    t.equal(reply.status, status, fixture);
    t.equal(reply.text(), body, fixture);
    t.equal(reply.headers["content-type"], "application/json");
    t.equal(reply.headers["cache-control"], "no-store");
  }
});

t.test("missing ports are listed ascending", async (t) => {
  const daemon = await startTestDaemon(t, [
    "--proc-root",
    join(fixtures, "listen-tcp-only"),
    "--readiness-required-listener=15009",
    "--readiness-required-listener=8000",
    "--readiness-required-listener=443",
  ]);
  const reply = await send(daemon.port, "/readyz?x=1");
  t.equal(reply.status, 503);
  t.same(reply.json(), { status: "not ready", missingListeners: [443, 15009], failedChecks: ["listener-443", "listener-15009"] });
  const head = await send(daemon.port, "/readyz", { method: "HEAD" });
  t.equal(head.status, 503);
  t.equal(head.body.length, 0);
  t.equal(head.headers["content-length"], String(reply.body.length));
});

t.test("no required ports: /readyz is 200 and never reads a table", async (t) => {
  let reads = 0;
  const readTable: TableReader = async () => {
    reads++;
  };
  const daemon = await startTestDaemon(t, [], readTable);
  t.equal((await send(daemon.port, "/readyz")).text(), '{"status":"ready"}');
  t.equal(reads, 0);
});

t.test("probes share one scan per TTL", async (t) => {
  let reads = 0;
  const readTable: TableReader = async (_path, onChunk) => {
    reads++;
    onChunk(Buffer.from("  sl  local_address rem_address   st\n   0: 0100007F:3AA0 00000000:0000 0A\n"));
  };
  const daemon = await startTestDaemon(t, ["--readiness-required-listener", "15008", "--readiness-cache-ttl", "1h"], readTable);
  const replies = await Promise.all(Array.from({ length: 50 }, () => send(daemon.port, "/readyz")));
  t.same(new Set(replies.map((reply) => reply.status)), new Set([200]));
  t.equal(reads, 2, "one scan (tcp and tcp6) for 50 probes plus the start-up check");
});

t.test("other methods and paths go to the upstream", async (t) => {
  const upstream = await startUpstream(t);
  upstream.handle((req, res) => res.end(`upstream saw ${req.method} ${req.url}`));
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url, "--readiness-required-listener", "1", "--proc-root", join(fixtures, "header-only")]);
  const cases: Array<[string, string]> = [
    ["POST", "/readyz"],
    ["POST", "/readyz/x"],
    ["GET", "/healthz/"],
    ["PUT", "/health"],
    ["DELETE", "/healthz"],
    ["GET", "/readyzz"],
    ["GET", "/Health"],
  ];
  for (const [method, path] of cases) {
    const reply = await send(daemon.port, path, { method });
    t.equal(reply.text(), `upstream saw ${method} ${path}`, `${method} ${path}`);
  }
});
