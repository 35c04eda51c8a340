// Requests racing the listener's close: an idle keep-alive connection whose next request was sent but not yet read gets a response, not a reset.
import { connect, type Socket } from "node:net";
import t from "tap";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { startUpstream } from "../helpers/upstream.js";

const CONNECTIONS = 20;

/** Opens a keep-alive connection and completes one request on it: it is now idle, as a load balancer's pooled connection is. */
function openIdle(port: number): Promise<Socket> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => socket.write("GET /first HTTP/1.1\r\nHost: a\r\n\r\n"));
    socket.on("error", () => {});
    let text = "";
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      if (!text.endsWith("\r\n\r\nok")) return;
      socket.off("data", onData);
      resolve(socket);
    };
    socket.on("data", onData);
  });
}

/** Everything the daemon sends on `socket` until it closes it, and whether it reset the connection. */
function collect(socket: Socket): Promise<{ text: string; reset: boolean }> {
  return new Promise((resolve) => {
    let text = "";
    let reset = false;
    socket.on("data", (chunk: Buffer) => (text += chunk.toString()));
    socket.on("error", (error: NodeJS.ErrnoException) => (reset = error.code === "ECONNRESET"));
    socket.on("close", () => resolve({ text, reset }));
  });
}

t.test("requests sent on idle keep-alive connections as the listener closes are answered (Connection: close), not reset", async (t) => {
  const upstream = await startUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url, "--shutdown-delay", "0s"]);
  const sockets = await Promise.all(Array.from({ length: CONNECTIONS }, () => openIdle(daemon.port)));
  const outcomes = sockets.map(collect);
  // The request bytes reach the daemon's kernel buffer now; the daemon reads them only after this
  // tick, when the shutdown has already begun: each connection is "idle" with a request waiting.
  for (const socket of sockets) socket.write("GET /in-flight HTTP/1.1\r\nHost: a\r\n\r\n");
  const stopped = daemon.shutdown.run("SIGTERM");
  const results = await Promise.all(outcomes);
  await stopped;
  t.equal(results.filter((result) => result.reset).length, 0, "no connection reset");
  t.equal(results.filter((result) => /^HTTP\/1\.1 200 OK\r\n[\s\S]*connection: close\r\n[\s\S]*\r\n\r\nok$/i.test(result.text)).length, CONNECTIONS, "every request answered, with Connection: close");
});
