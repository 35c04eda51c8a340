// Protocol upgrades: a WebSocket handshake and its frames pass through; other upgrades get a plain response; 502 when down.
import { createServer, request, type IncomingMessage } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import t from "tap";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { closedPort, deferred } from "../helpers/test-doubles.js";
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
