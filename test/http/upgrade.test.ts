// Protocol upgrades: a WebSocket handshake and its frames pass through; other upgrades get a plain response; 502 when down.
import { createServer, request, type IncomingMessage } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import t, { type Test } from "tap";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { closedPort, deferred } from "../helpers/test-doubles.js";
import { startRawUpstream } from "../helpers/raw-upstream.js";
import { startUpstream } from "../helpers/upstream.js";

const HANDSHAKE = {
  connection: "Upgrade",
  upgrade: "websocket",
  "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
  "sec-websocket-version": "13",
};

/** Sends an upgrade request; resolves with the 101 and its socket, or with the plain response. */
function askToUpgrade(port: number, headers: Record<string, string>) {
  return new Promise<{ upgraded?: { res: IncomingMessage; socket: Socket }; res?: IncomingMessage; body?: string }>((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path: "/v1/realtime?model=x", headers, agent: false });
    req.on("upgrade", (res, socket) => resolve({ upgraded: { res, socket } }));
    req.on("response", (res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => (body += chunk.toString()));
      res.on("end", () => resolve({ res, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

t.test("a WebSocket handshake is forwarded and frames flow both ways", async (t) => {
  // An upstream that accepts the switch and then echoes every byte.
  const seen = deferred<IncomingMessage>();
  const upstreamServer = createServer();
  upstreamServer.on("upgrade", (req: IncomingMessage, socket: Socket) => {
    seen.resolve(req);
    socket.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => upstreamServer.listen(0, "127.0.0.1", resolve));
  t.teardown(() => {
    upstreamServer.closeAllConnections();
    upstreamServer.close();
  });
  const port = (upstreamServer.address() as AddressInfo).port;
  const daemon = await startTestDaemon(t, ["--upstream", `http://127.0.0.1:${port}/api`]);
  const { upgraded } = await askToUpgrade(daemon.port, HANDSHAKE);
  t.equal(upgraded?.res.statusCode, 101);
  const socket = upgraded!.socket;
  t.teardown(() => socket.destroy());
  const echoed = new Promise<string>((resolve) => socket.once("data", (chunk: Buffer) => resolve(chunk.toString())));
  socket.write("ping-frame");
  t.equal(await echoed, "ping-frame", "bytes flow both ways after the switch");
  const req = await seen.promise;
  t.equal(req.url, "/api/v1/realtime?model=x", "path prefix and query kept");
  t.equal(req.headers.upgrade, "websocket");
  t.equal(req.headers.connection, "Upgrade");
  t.equal(req.headers["sec-websocket-key"], HANDSHAKE["sec-websocket-key"]);
  t.equal(req.headers["x-forwarded-for"], "127.0.0.1");
});

t.test("an upgrade to another protocol gets the upstream's plain answer", async (t) => {
  const upstream = await startUpstream(t);
  upstream.handle((req, res) => res.end(`plain ${req.headers.upgrade ?? "no upgrade"} ${req.headers.connection}`));
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  const reply = await askToUpgrade(daemon.port, { connection: "Upgrade, HTTP2-Settings", upgrade: "h2c", "http2-settings": "AAMAAABkAAQAAP__" });
  t.equal(reply.res?.statusCode, 200);
  t.equal(reply.body, "plain no upgrade close");
  t.equal(upstream.received.at(-1)?.headers["http2-settings"], undefined, "Connection-listed names removed");
});

t.test("upgrade with the upstream down: 502 JSON", async (t) => {
  const daemon = await startTestDaemon(t, ["--upstream", `http://127.0.0.1:${await closedPort()}`]);
  const reply = await askToUpgrade(daemon.port, HANDSHAKE);
  t.equal(reply.res?.statusCode, 502);
  t.match(JSON.parse(reply.body ?? "{}"), { error: { code: 502, message: "upstream unavailable" } });
  t.ok(daemon.logs.records.some((record) => record.msg === "upstream unavailable" && record.code === "ECONNREFUSED"));
});

/**
 * A raw upstream that refuses the upgrade with `status` but keeps its connection open and then
 * answers every further request on it, recording what arrived (the smuggling probe).
 */
async function startRefusingUpstream(t: Test, status: string) {
  const arrived: string[] = [];
  const { port } = await startRawUpstream(t, (head, socket) => {
    arrived.push(head);
    const reply = arrived.length === 1 ? status : "200 OK";
    socket.write(`HTTP/1.1 ${reply}\r\nContent-Length: 5\r\nX-Upstream-Seen: ${arrived.length}\r\nKeep-Alive: timeout=60\r\n\r\nnope!`);
  });
  return { port, arrived };
}

/** Sends raw bytes on one connection and collects everything until the proxy closes it (or `limitMs`). */
function rawExchange(port: number, bytes: string): Promise<{ text: string; closedByProxy: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let text = "";
    const giveUp = setTimeout(() => {
      socket.destroy();
      resolve({ text, closedByProxy: false });
    }, 3_000);
    socket.on("data", (chunk: Buffer) => (text += chunk.toString("latin1")));
    socket.on("close", () => {
      clearTimeout(giveUp);
      resolve({ text, closedByProxy: true });
    });
    socket.write(bytes);
  });
}

for (const status of ["403 Forbidden", "401 Unauthorized", "400 Bad Request", "200 OK"]) {
  t.test(`a refused upgrade (${status}) is an ordinary response, and the connection is closed (no smuggling)`, async (t) => {
    const upstream = await startRefusingUpstream(t, status);
    const daemon = await startTestDaemon(t, ["--upstream", `http://127.0.0.1:${upstream.port}`]);
    const handshake =
      "GET /ws HTTP/1.1\r\nHost: app\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n" +
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
    const smuggled = "GET /readyz HTTP/1.1\r\nHost: app\r\nX-Forwarded-For: 6.6.6.6\r\n\r\n";
    const { text, closedByProxy } = await rawExchange(daemon.port, handshake + smuggled);
    t.ok(closedByProxy, "the proxy closed the client connection after the refusal");
    t.match(text, new RegExp(`^HTTP/1\\.1 ${status}\\r\\n`), "the refusal reaches the client");
    t.match(text, /\r\nconnection: close\r\n/i, "and says the connection closes");
    t.notMatch(text, /keep-alive: timeout/i, "hop-by-hop headers of the refusal are removed");
    t.match(text, /\r\n\r\nnope!$/, "with its body, and nothing after it");
    t.equal(upstream.arrived.length, 1, "the smuggled request never reached the upstream");
    t.match(upstream.arrived[0], /x-forwarded-for: 127\.0\.0\.1/i);
  });
}

t.test("a 101 that switches to another protocol than asked is a 502, not a tunnel", async (t) => {
  const upstream = await startRawUpstream(t, (_head, socket) => socket.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n"));
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  const reply = await askToUpgrade(daemon.port, HANDSHAKE);
  t.equal(reply.res?.statusCode, 502);
});

t.test("an upstream that never answers the handshake: 504 after --response-header-timeout", async (t) => {
  const upstream = await startRawUpstream(t, () => {}); // reads the handshake, never answers
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url, "--response-header-timeout", "200ms"]);
  const reply = await askToUpgrade(daemon.port, HANDSHAKE);
  t.equal(reply.res?.statusCode, 504);
});
