// The relay's upstream pool from outside: keep-alive connections to the app are reused, and one that cannot be reused is not.
import { createServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import t from "tap";
import { send } from "../helpers/http-client.js";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { startUpstream } from "../helpers/upstream.js";

t.test("sequential requests share one upstream connection", async (t) => {
  const upstream = await startUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  const connections = new Set<string>();
  upstream.handle((req, res) => {
    connections.add(`${req.socket.remotePort}`);
    res.end("ok");
  });
  // Each a fresh client connection, so only the pool can make them share.
  for (let index = 0; index < 5; index++) t.equal((await send(daemon.port, `/r${index}`)).text(), "ok");
  t.equal(connections.size, 1, "the answer's last read released the connection to the pool, not to a close");
});

t.test("an upstream that answers `Connection: close` gets a new connection next time", async (t) => {
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.once("data", () => socket.end("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok"));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const daemon = await startTestDaemon(t, ["--upstream", `http://127.0.0.1:${(server.address() as AddressInfo).port}`]);
  for (let index = 0; index < 3; index++) t.equal((await send(daemon.port, "/")).text(), "ok");
  t.equal(sockets.length, 3);
});
