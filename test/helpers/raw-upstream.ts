// A raw TCP upstream for hostile-answer tests: calls back once per request head (bodies are not read), so a test writes any bytes it likes.
import { createServer, type AddressInfo, type Socket } from "node:net";
import type { Test } from "tap";

export interface RawUpstream {
  readonly port: number;
  readonly url: string;
}

/** Listens on 127.0.0.1:0; `onHead` gets each request head (without its blank line) and the socket to answer on. */
export async function startRawUpstream(t: Test, onHead: (head: string, socket: Socket) => void): Promise<RawUpstream> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => {});
    let buffered = "";
    socket.on("data", (chunk: Buffer) => {
      buffered += chunk.toString("latin1");
      let end: number;
      while ((end = buffered.indexOf("\r\n\r\n")) >= 0) {
        const head = buffered.slice(0, end);
        buffered = buffered.slice(end + 4);
        onHead(head, socket);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  const port = (server.address() as AddressInfo).port;
  return { port, url: `http://127.0.0.1:${port}` };
}
