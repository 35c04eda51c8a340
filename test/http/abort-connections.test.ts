// Clients that vanish must not make the proxy open replacement upstream connections (undici#5845): counted at the upstream.
import { createServer, request, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import t, { type Test } from "tap";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { deferred } from "../helpers/test-doubles.js";

const STREAMS = 20;

/** An SSE upstream that counts the TCP connections it accepts and the requests it gets. */
async function countingUpstream(t: Test) {
  const counts = { connections: 0, requests: 0, closedRequests: 0 };
  const everyRequestClosed = deferred();
  const sockets = new Set<Socket>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    counts.requests++;
    req.on("data", () => {});
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write("data: 1\n\n");
    res.once("close", () => ++counts.closedRequests === STREAMS && everyRequestClosed.resolve());
  });
  server.on("connection", (socket: Socket) => {
    counts.connections++;
    sockets.add(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, counts, everyRequestClosed: everyRequestClosed.promise };
}

/** Opens a request through the proxy and resolves once its first bytes came back (or, for an upload, once it is under way). */
function openStream(port: number, upload: boolean) {
  return new Promise<ReturnType<typeof request>>((resolve) => {
    const req = request({ host: "127.0.0.1", port, path: "/stream", method: upload ? "POST" : "GET", agent: false, headers: upload ? { "content-length": "1000000" } : {} }, (res) =>
      res.once("data", () => resolve(req)),
    );
    req.on("error", () => {});
    if (upload) req.write(Buffer.alloc(64 * 1024));
    else req.end();
  });
}

for (const upload of [false, true]) {
  t.test(`${STREAMS} ${upload ? "abandoned uploads" : "SSE clients that vanish"}: no replacement upstream connection`, async (t) => {
    const upstream = await countingUpstream(t);
    const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
    const clients = await Promise.all(Array.from({ length: STREAMS }, () => openStream(daemon.port, upload)));
    t.equal(upstream.counts.connections, STREAMS, "one upstream connection per stream");
    for (const client of clients) client.destroy();
    await upstream.everyRequestClosed;
    // undici connected for an aborted request while handling its socket's close. One more request
    // afterwards: it needs exactly one new connection, where a spurious one would have been reused.
    (await openStream(daemon.port, false)).destroy();
    t.equal(upstream.counts.requests, STREAMS + 1);
    t.equal(upstream.counts.connections, STREAMS + 1, "nothing reconnected for the aborted requests");
  });
}
