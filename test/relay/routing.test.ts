// The one routing (src/relay/routing.ts) over both protocols: every path of CONTRACT §2, and the paths beside them that are the app's, get the same status and body over HTTP/1.1 and h2c.
import { join } from "node:path";
import t from "tap";
import { h2Connect, h2Request } from "../helpers/h2.js";
import { send } from "../helpers/http-client.js";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { startUpstream, type TestUpstream } from "../helpers/upstream.js";

const fixtures = join(import.meta.dirname, "../../proc-fixtures");

/** What a route is: ours (the app never sees it) or the app's (it answers `app: <method> <target>`). */
type Owner = "ours" | "app";

interface Route {
  readonly method: string;
  readonly path: string;
  readonly owner: Owner;
  /** The status expected, for the routes whose answer is ours. */
  readonly status?: number;
  readonly body?: string;
}

const CHECKS = '{"error":"no such check","checks":["listener-8000","listener-15008","shutdown"]}';

/** With `--app-health-path`: `/app-health` is ours, answered from the app's own health path. */
const ROUTES: readonly Route[] = [
  { method: "GET", path: "/health", owner: "ours", status: 200, body: '{"status":"ok"}' },
  { method: "GET", path: "/healthz", owner: "ours", status: 200, body: '{"status":"ok"}' },
  { method: "GET", path: "/healthz?verbose=1", owner: "ours", status: 200, body: '{"status":"ok"}' },
  { method: "HEAD", path: "/health", owner: "ours", status: 200, body: "" },
  { method: "GET", path: "/readyz", owner: "ours", status: 503 },
  { method: "HEAD", path: "/readyz", owner: "ours", status: 503, body: "" },
  { method: "GET", path: "/readyz?verbose", owner: "ours", status: 503 },
  { method: "GET", path: "/readyz?exclude=listener-15008", owner: "ours", status: 200 },
  { method: "GET", path: "/readyz?wait=never", owner: "ours", status: 400 },
  { method: "GET", path: "/readyz/listener-8000", owner: "ours", status: 200, body: "ok" },
  { method: "GET", path: "/readyz/listener-15008", owner: "ours", status: 503 },
  { method: "GET", path: "/readyz/shutdown?verbose", owner: "ours", status: 200, body: "ok" },
  // A /readyz/<x> that names no check is ours too (the tested rule of §2): 404 with the names.
  { method: "GET", path: "/readyz/nope", owner: "ours", status: 404, body: CHECKS },
  { method: "GET", path: "/readyz/", owner: "ours", status: 404, body: CHECKS },
  { method: "GET", path: "/readyz/Shutdown", owner: "ours", status: 404, body: CHECKS },
  { method: "HEAD", path: "/readyz/nope", owner: "ours", status: 404, body: "" },
  { method: "GET", path: "/app-health", owner: "ours", status: 200, body: "app healthy" },
  { method: "OPTIONS", path: "*", owner: "ours", status: 200, body: "" },
  // GET and HEAD on the exact path only: everything else is the app's, untouched.
  { method: "POST", path: "/readyz", owner: "app" },
  { method: "PUT", path: "/healthz", owner: "app" },
  { method: "DELETE", path: "/readyz/shutdown", owner: "app" },
  { method: "OPTIONS", path: "/readyz", owner: "app" },
  { method: "POST", path: "/wait-for-drain", owner: "app" },
  { method: "GET", path: "/healthz/", owner: "app" },
  { method: "GET", path: "/readyzx", owner: "app" },
  { method: "GET", path: "/HEALTH", owner: "app" },
  { method: "GET", path: "/health/x?y", owner: "app" },
  { method: "GET", path: "/wait-for-drain/x", owner: "app" },
  { method: "GET", path: "/app-health/x", owner: "app" },
  { method: "HEAD", path: "/metrics", owner: "app" },
];

interface Answer {
  readonly status: number;
  readonly contentType: string | undefined;
  readonly body: string;
}

function appAnswering(app: TestUpstream): void {
  app.handle((req, res) => {
    if (req.url === "/own-health") {
      res.end("app healthy");
      return;
    }
    res.setHeader("content-type", "text/plain");
    res.end(`app: ${req.method} ${req.url}`);
  });
}

const PROBE_ARGS = ["--proc-root", join(fixtures, "other-port-listening"), "--readiness-required-listener", "15008", "--readiness-required-listener", "8000"];

for (const upstreamProtocol of ["auto", "http1"]) {
  t.test(`--upstream-protocol ${upstreamProtocol}: each route answers the same over HTTP/1.1 and h2c`, async (t) => {
    const app = await startUpstream(t);
    appAnswering(app);
    const daemon = await startTestDaemon(t, [...PROBE_ARGS, "--upstream", app.url, "--upstream-protocol", upstreamProtocol, "--app-health-path", "/own-health"]);
    const session = h2Connect(t, daemon.port);
    for (const route of ROUTES) {
      const name = `${route.method} ${route.path}`;
      const seenBefore = app.received.filter((request) => request.url !== "/own-health").length;
      const h1Reply = await send(daemon.port, route.path, { method: route.method });
      const overH1: Answer = { status: h1Reply.status, contentType: h1Reply.headers["content-type"], body: h1Reply.text() };
      const h2Reply = await h2Request(session, { ":method": route.method, ":path": route.path });
      const overH2: Answer = { status: h2Reply.status, contentType: h2Reply.headers["content-type"] as string | undefined, body: h2Reply.body.toString() };
      t.same(overH2, overH1, `${name}: the same answer over both protocols`);
      const seen = app.received.filter((request) => request.url !== "/own-health").slice(seenBefore);
      if (route.owner === "ours") {
        t.same(seen, [], `${name}: ours, the app never saw it`);
        t.equal(overH1.status, route.status, `${name}: status`);
        if (route.body !== undefined) t.equal(overH1.body, route.body, `${name}: body`);
      } else {
        t.same(
          seen.map((request) => `${request.method} ${request.url}`),
          [name, name],
          `${name}: the app's, once per protocol`,
        );
        t.equal(overH1.body, route.method === "HEAD" ? "" : `app: ${name}`, `${name}: the app's answer`);
      }
    }
  });
}

t.test("without --app-health-path, /app-health is the app's over both protocols", async (t) => {
  const app = await startUpstream(t);
  appAnswering(app);
  const daemon = await startTestDaemon(t, ["--upstream", app.url]);
  const session = h2Connect(t, daemon.port);
  const overH1 = await send(daemon.port, "/app-health");
  const overH2 = await h2Request(session, { ":path": "/app-health" });
  t.equal(overH1.text(), "app: GET /app-health");
  t.equal(overH2.body.toString(), "app: GET /app-health");
  t.same(
    app.received.map((request) => request.url),
    ["/app-health", "/app-health"],
  );
});

t.test("the gRPC health service is h2's alone: over HTTP/1.1 the same call is the app's (gRPC is HTTP/2 end to end)", async (t) => {
  const app = await startUpstream(t);
  appAnswering(app);
  const daemon = await startTestDaemon(t, ["--upstream", app.url, "--upstream-protocol", "http1"]);
  const session = h2Connect(t, daemon.port);
  // A HealthCheckRequest for the service "": an empty message, framed.
  const call = Buffer.from([0, 0, 0, 0, 0]);
  const headers = { "content-type": "application/grpc", te: "trailers" };
  const overH2 = await h2Request(session, { ":method": "POST", ":path": "/grpc.health.v1.Health/Check", ...headers }, call);
  t.equal(overH2.status, 200);
  t.equal(overH2.trailers?.["grpc-status"], "0", "answered by the proxy over h2");
  t.same(app.received, [], "the app saw nothing of the h2 call");
  const overH1 = await send(daemon.port, "/grpc.health.v1.Health/Check", { method: "POST", headers, body: call });
  t.equal(overH1.text(), "app: POST /grpc.health.v1.Health/Check", "over HTTP/1.1: the app's");
});
