// A server made of the codec's connection alone, for conformance and flood tests: every request is answered 200 with a small body once its own body has ended.
import net from "node:net";
import type { H2ConnectionHandler } from "../../src/h2-codec/h2-connection.js";
import { connectionOnSocket } from "../../src/h2-codec/socket-binding.js";
import type { H2Stream } from "../../src/h2-codec/h2-stream.js";
import type { CodecError } from "../../src/h2-codec/codec-error.js";

/** What the server saw, for the tests to assert on. */
export interface EchoServerLog {
  heads: string[][];
  resets: { streamId: number; code: number; byPeer: boolean }[];
  closes: (string | undefined)[];
  faults: unknown[];
  bodyOctets: number;
}

const BODY = Buffer.from("readiness-proxy codec: ok\n", "latin1");

/** Starts the server on 127.0.0.1; `clock` is the flood budgets' clock. */
export async function startEchoServer(clock: () => number = () => performance.now()): Promise<{ port: number; log: EchoServerLog; close(): Promise<void> }> {
  const log: EchoServerLog = { heads: [], resets: [], closes: [], faults: [], bodyOctets: 0 };
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    const handler: H2ConnectionHandler = {
      onHead(stream, fields, _neverIndexed, endStream) {
        log.heads.push([...fields]);
        if (endStream) answer(stream);
      },
      onOversizedHead(stream) {
        connection.respond(stream, [":status", "431", "content-length", "0"], true);
      },
      onData(stream, source, start, end, endStream) {
        const data = source.subarray(start, end);
        log.bodyOctets += data.length;
        connection.consume(stream, data.length);
        if (endStream) answer(stream);
      },
      onTrailers(stream) {
        answer(stream);
      },
      onReset(stream, code, byPeer) {
        log.resets.push({ streamId: stream.id, code, byPeer });
      },
      onStreamEnd() {},
      onWritable() {},
      onGoaway() {},
      onClose(error: CodecError | undefined) {
        log.closes.push(error?.code);
      },
      onFault(error) {
        log.faults.push(error);
      },
    };
    const connection = connectionOnSocket(socket, handler, { role: "server", clock }, () => {});
    const answer = (stream: H2Stream): void => {
      connection.respond(stream, [":status", "200", "content-type", "text/plain", "content-length", String(BODY.length)], false);
      connection.sendData(stream, BODY, true);
    };
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    log,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
