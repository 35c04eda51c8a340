// Slow and idle clients against the relay's coarse clock (advanced by hand, no waiting): node:http's 408 for a head that dribbles, a close for a long-idle connection.
import { connect, type Socket } from "node:net";
import t from "tap";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { startUpstream } from "../helpers/upstream.js";

/** Everything the daemon sends on `socket` until it closes it. */
function collect(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = "";
    socket.on("data", (chunk: Buffer) => (text += chunk.toString("latin1")));
    socket.on("error", () => {});
    socket.on("close", () => resolve(text));
  });
}

function open(port: number): Promise<Socket> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => resolve(socket));
  });
}

/** Resolves once `socket`'s bytes have reached the daemon and been read: a request answered on it proves it. */
async function roundTrip(socket: Socket): Promise<void> {
  await new Promise<void>((resolve) => {
    socket.once("data", () => resolve());
    socket.write("GET /health HTTP/1.1\r\nHost: a\r\n\r\n");
  });
}

t.test("a head not complete within 10 s of its first byte: 408, then the close", async (t) => {
  const upstream = await startUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  const socket = await open(daemon.port);
  await roundTrip(socket);
  const text = collect(socket);
  socket.write("GET /slow HTTP/1.1\r\nHost: a\r\nX-Dribble: ");
  // The bytes are read once the daemon's event loop turns; a health request on another connection waits for that turn.
  await roundTrip(await open(daemon.port));
  for (let second = 0; second < 9; second++) daemon.server.sweep();
  socket.write("a");
  await roundTrip(await open(daemon.port));
  t.equal(upstream.received.length, 0);
  daemon.server.sweep();
  t.match(await text, /^HTTP\/1\.1 408 Request Timeout\r\nconnection: close\r\n/);
  t.equal(upstream.received.length, 0, "the slow request never reached the app");
});

t.test("an idle keep-alive connection is closed after 620 s, a busy one is not", async (t) => {
  const upstream = await startUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  const idle = await open(daemon.port);
  await roundTrip(idle);
  let closed = false;
  idle.on("close", () => (closed = true));
  const done = collect(idle);
  for (let second = 0; second < 619; second++) daemon.server.sweep();
  await roundTrip(await open(daemon.port));
  t.notOk(closed, "still open at 619 s");
  daemon.server.sweep();
  await done;
  t.ok(closed, "closed at 620 s");
});
