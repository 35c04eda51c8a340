// The forwarding rules agree on every pairing of protocols (issue 54): HTTP/1.1 and h2 clients, each to an HTTP/1.1 and an h2c app, sent the same requests; what each app gets, and what each client is answered, compared case by case.
import { connect } from "node:net";
import type { ClientHttp2Session, IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http2";
import t, { type Test } from "tap";
import { h2Connect, h2Request, startH2Upstream } from "../helpers/h2.js";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { startUpstream } from "../helpers/upstream.js";

type Client = "HTTP/1.1" | "h2";
type App = "HTTP/1.1" | "h2c";
const PAIRINGS: ReadonlyArray<readonly [Client, App]> = [
  ["HTTP/1.1", "HTTP/1.1"],
  ["HTTP/1.1", "h2c"],
  ["h2", "HTTP/1.1"],
  ["h2", "h2c"],
];

/** What an app got, whatever it speaks: the fields the rules decide, `undefined` for one that did not arrive. */
interface Arrived {
  readonly method: string;
  readonly path: string;
  readonly authority: unknown;
  readonly forwardedFor: unknown;
  readonly forwardedProto: unknown;
  readonly forwardedHost: unknown;
  /** The watched fields that arrived (hop-by-hop ones must not), sorted. */
  readonly watched: readonly string[];
  readonly te: unknown;
}

/** Fields the cases send that the rules speak of: only `x-keep` and `x-answer` are end-to-end. */
const WATCHED = ["x-keep", "x-drop", "keep-alive", "proxy-connection", "trailer", "upgrade", "expect", "http2-settings"];

/** An answer, whatever the client speaks: the status (0 for none), a stream's RST_STREAM code, the fields watched. */
interface Answered {
  readonly status: number;
  readonly rstCode: number;
  readonly headers: Readonly<Record<string, unknown>>;
}

function arrived(headers: IncomingHttpHeaders, method: string, path: string, authority: unknown): Arrived {
  return {
    method,
    path,
    authority,
    forwardedFor: headers["x-forwarded-for"],
    forwardedProto: headers["x-forwarded-proto"],
    forwardedHost: headers["x-forwarded-host"],
    watched: WATCHED.filter((name) => headers[name] !== undefined).sort(),
    te: headers.te,
  };
}

/** Both apps, and a daemon in front of each (`/api` as the upstream's path prefix); `since(n)` is what the app of `app` got after its n-th request. */
async function setUp(t: Test) {
  const http1App = await startUpstream(t);
  http1App.handle((_req, res) => {
    // Answer-side hop-by-hop: x-hop is listed by Connection, so no client may see it.
    res.setHeader("connection", "x-hop");
    res.setHeader("x-hop", "1");
    res.setHeader("x-answer", "1");
    res.end("ok");
  });
  const h2cApp = await startH2Upstream(t);
  h2cApp.handle((stream, headers) => {
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => {
      if (stream.aborted) return;
      h2cApp.received.push({ headers, body: Buffer.concat(chunks) });
      if (stream.destroyed) return;
      stream.respond({ ":status": 200, "x-answer": "1" });
      stream.end("ok");
    });
  });
  const daemons = {
    "HTTP/1.1": await startTestDaemon(t, ["--upstream", `${http1App.url}/api`, "--upstream-protocol", "http1"]),
    h2c: await startTestDaemon(t, ["--upstream", `${h2cApp.url}/api`, "--upstream-protocol", "h2c"]),
  };
  const upstreamHost = { "HTTP/1.1": http1App.url.slice("http://".length), h2c: h2cApp.url.slice("http://".length) };
  const sessions = { "HTTP/1.1": h2Connect(t, daemons["HTTP/1.1"].port), h2c: h2Connect(t, daemons.h2c.port) };
  const count = (app: App): number => (app === "HTTP/1.1" ? http1App.received.length : h2cApp.received.length);
  const since = (app: App, from: number): Arrived[] =>
    app === "HTTP/1.1"
      ? http1App.received.slice(from).map((one) => arrived(one.headers, one.method, one.url, one.headers.host))
      : h2cApp.received.slice(from).map((one) => arrived(one.headers, String(one.headers[":method"]), String(one.headers[":path"]), one.headers[":authority"]));
  return { daemons, sessions, upstreamHost, count, since };
}

/** One HTTP/1.1 request written raw (no client library judges it), read until the proxy closes the connection (send `Connection: close` for a request it forwards). */
function http1Request(port: number, head: string): Promise<Answered> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let text = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => (text += chunk));
    socket.on("end", () => {
      socket.destroy();
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      const headers: Record<string, unknown> = {};
      for (const line of text.slice(0, text.indexOf("\r\n\r\n")).split("\r\n").slice(1)) {
        const colon = line.indexOf(":");
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status, rstCode: 0, headers });
    });
    socket.on("error", reject);
    socket.write(head);
  });
}

async function h2Answer(session: ClientHttp2Session, headers: OutgoingHttpHeaders): Promise<Answered> {
  const answer = await h2Request(session, headers);
  return { status: answer.status, rstCode: answer.rstCode, headers: answer.headers };
}

/** One case: the request each client sends for it, and what every pairing must agree on. */
interface Case {
  readonly name: string;
  readonly http1: string;
  /** The same request from an h2 client; none where HTTP/2 cannot say it (absolute-form, Connection). */
  readonly h2?: OutgoingHttpHeaders;
  /** What the app gets (`host` stands for the upstream's own authority), or nothing. */
  readonly expected: ((upstreamHost: string, client: Client, app: App) => Arrived) | undefined;
  /** The client's status, and the RST_STREAM code an h2 client gets instead of an answer (0: none). */
  readonly status: { readonly http1: number; readonly h2: number; readonly h2Reset?: number };
}

const CLOSE = "Connection: close\r\n";
const PLAIN = { watched: [] as string[], te: undefined, forwardedProto: "http", forwardedFor: "127.0.0.1" };

const CASES: readonly Case[] = [
  {
    name: "a path: the upstream's path prefix before it, the query kept",
    http1: `GET /v1/x?q=1 HTTP/1.1\r\nHost: svc.example\r\n${CLOSE}\r\n`,
    h2: { ":path": "/v1/x?q=1", ":authority": "svc.example" },
    expected: () => ({ ...PLAIN, method: "GET", path: "/api/v1/x?q=1", authority: "svc.example", forwardedHost: "svc.example" }),
    status: { http1: 200, h2: 200 },
  },
  {
    name: "absolute-form: its path prefixed, its authority replaces Host (as :authority says it on h2)",
    http1: `GET http://svc.example:8443/v1/x HTTP/1.1\r\nHost: client.example\r\n${CLOSE}\r\n`,
    h2: { ":path": "/v1/x", ":authority": "svc.example:8443" },
    expected: () => ({ ...PLAIN, method: "GET", path: "/api/v1/x", authority: "svc.example:8443", forwardedHost: "svc.example:8443" }),
    status: { http1: 200, h2: 200 },
  },
  {
    name: "OPTIONS * is the proxy's to answer",
    http1: `OPTIONS * HTTP/1.1\r\nHost: svc.example\r\n${CLOSE}\r\n`,
    h2: { ":method": "OPTIONS", ":path": "*", ":authority": "svc.example" },
    expected: undefined,
    status: { http1: 200, h2: 200 },
  },
  {
    // An h2 one is malformed (RFC 9113 §8.3.1): the codec's stream error, as for an invalid authority.
    name: "* for any other method is a bad target",
    http1: `GET * HTTP/1.1\r\nHost: svc.example\r\n\r\n`,
    h2: { ":method": "GET", ":path": "*", ":authority": "svc.example" },
    expected: undefined,
    status: { http1: 400, h2: 0, h2Reset: 1 },
  },
  {
    name: "CONNECT is not a reverse proxy's to serve",
    http1: `CONNECT svc.example:443 HTTP/1.1\r\nHost: svc.example:443\r\n\r\n`,
    h2: { ":method": "CONNECT", ":authority": "svc.example:443" },
    expected: undefined,
    status: { http1: 501, h2: 501 },
  },
  {
    name: "a Host the client's Connection lists is hop-by-hop: the upstream's authority goes, X-Forwarded-Host says the client's",
    http1: `GET /v1 HTTP/1.1\r\nHost: svc.example\r\nConnection: close, host\r\n\r\n`,
    expected: (host) => ({ ...PLAIN, method: "GET", path: "/api/v1", authority: host, forwardedHost: "svc.example" }),
    status: { http1: 200, h2: 200 },
  },
  {
    // Found by the request fuzz: the Host line the plan keeps must not then be dropped as Connection-listed.
    name: "absolute-form naming the client's own Host, which Connection lists: the target's authority still goes",
    http1: `GET http://svc.example/v1 HTTP/1.1\r\nHost: svc.example\r\nConnection: close, host\r\n\r\n`,
    expected: () => ({ ...PLAIN, method: "GET", path: "/api/v1", authority: "svc.example", forwardedHost: "svc.example" }),
    status: { http1: 200, h2: 200 },
  },
  ...["a b", "evil@x/y?z", "x/../admin"].map(
    (host): Case => ({
      name: `an invalid authority (${JSON.stringify(host)}) never reaches the app: a 400, or a stream error`,
      http1: `GET /v1 HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
      h2: { ":path": "/v1", ":authority": host },
      expected: undefined,
      status: { http1: 400, h2: 0, h2Reset: 1 },
    }),
  ),
  {
    name: "X-Forwarded-*: the client's values kept in order, ours appended",
    http1: `GET /v1 HTTP/1.1\r\nHost: svc.example\r\nX-Forwarded-For: 10.0.0.1\r\nX-Forwarded-Proto: https\r\nX-Forwarded-Host: edge.example\r\n${CLOSE}\r\n`,
    h2: { ":path": "/v1", ":authority": "svc.example", "x-forwarded-for": "10.0.0.1", "x-forwarded-proto": "https", "x-forwarded-host": "edge.example" },
    expected: () => ({ ...PLAIN, method: "GET", path: "/api/v1", authority: "svc.example", forwardedFor: "10.0.0.1, 127.0.0.1", forwardedProto: "https, http", forwardedHost: "edge.example, svc.example" }),
    status: { http1: 200, h2: 200 },
  },
  {
    name: "hop-by-hop fields and those Connection lists never cross; te: trailers goes on only where trailers can come back (h2 to h2c)",
    http1: `GET /v1 HTTP/1.1\r\nHost: svc.example\r\nConnection: close, x-drop, te\r\nX-Drop: 1\r\nKeep-Alive: timeout=5\r\nProxy-Connection: keep-alive\r\nTrailer: x-t\r\nTE: trailers\r\nX-Keep: 1\r\n\r\n`,
    h2: { ":path": "/v1", ":authority": "svc.example", trailer: "x-t", te: "trailers", "x-keep": "1" },
    expected: (_host, client, app) => ({ ...PLAIN, method: "GET", path: "/api/v1", authority: "svc.example", forwardedHost: "svc.example", watched: ["x-keep"], te: client === "h2" && app === "h2c" ? "trailers" : undefined }),
    status: { http1: 200, h2: 200 },
  },
];

t.test("every pairing forwards, answers and refuses each case alike", async (t) => {
  const { daemons, sessions, upstreamHost, count, since } = await setUp(t);
  for (const testCase of CASES) {
    for (const [client, app] of PAIRINGS) {
      if (client === "h2" && testCase.h2 === undefined) continue;
      const label = `${testCase.name} (${client} to ${app})`;
      const before = count(app);
      const answer = client === "HTTP/1.1" ? await http1Request(daemons[app].port, testCase.http1) : await h2Answer(sessions[app], testCase.h2!);
      const status = client === "HTTP/1.1" ? testCase.status.http1 : testCase.status.h2;
      t.same([answer.status, answer.rstCode], [status, client === "h2" ? (testCase.status.h2Reset ?? 0) : 0], `${label}: answered ${status}`);
      const expected = testCase.expected?.(upstreamHost[app], client, app);
      t.same(since(app, before), expected === undefined ? [] : [expected], `${label}: ${expected === undefined ? "nothing reaches the app" : "the app gets what every other pairing's gets"}`);
      if (expected !== undefined) {
        t.equal(answer.headers["x-answer"], "1", `${label}: the app's own field comes back`);
        t.equal(answer.headers["x-hop"], undefined, `${label}: a field the app's Connection lists does not`);
      }
    }
  }
});
