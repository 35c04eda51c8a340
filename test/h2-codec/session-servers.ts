// The two servers of the session differential, the codec alone and node:http2 (nghttp2), answering alike and writing down per connection and stream what reached the app.
import http2 from "node:http2";
import net from "node:net";
import { once } from "node:events";
import type { H2ConnectionHandler } from "../../src/h2-codec/h2-connection.js";
import { connectionOnSocket } from "../../src/h2-codec/socket-binding.js";

/** What one stream's app saw: the header list as received, the body octets, and whether the request ended (END_STREAM or trailers). */
export interface AppStream {
  head: string[];
  bodyOctets: number;
  ended: boolean;
  trailers: boolean;
}

/** What the app saw on one connection, by stream id; the recorder's key is the client's port. */
export type AppRecord = Map<number, AppStream>;

export interface RecordingServer {
  readonly port: number;
  /** The record of the connection whose client side has `clientPort` (a new empty one if none came). */
  take(clientPort: number): AppRecord;
  close(): Promise<void>;
}

/** The answer both servers give to a request once it has ended: 200 with this body. */
export const ANSWER_BODY = Buffer.from("readiness-proxy codec: ok\n", "latin1");
export const MAX_CONCURRENT_STREAMS = 100;
export const MAX_HEADER_LIST_SIZE = 16 * 1024;

class Records {
  readonly #byPort = new Map<number, AppRecord>();
  of(port: number): AppRecord {
    let record = this.#byPort.get(port);
    if (record === undefined) this.#byPort.set(port, (record = new Map()));
    return record;
  }
  take(port: number): AppRecord {
    const record = this.of(port);
    this.#byPort.delete(port);
    return record;
  }
}

function trackSockets(server: net.Server | http2.Http2Server): Set<net.Socket> {
  const sockets = new Set<net.Socket>();
  server.on("connection", (socket: net.Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  return sockets;
}

async function listen(server: net.Server | http2.Http2Server, sockets: Set<net.Socket>, records: Records): Promise<RecordingServer> {
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    port: (server.address() as net.AddressInfo).port,
    take: (clientPort) => records.take(clientPort),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A server of the codec's connection alone, with the limits the relay uses (CONTRACT §13). */
export async function startCodecServer(): Promise<RecordingServer> {
  const records = new Records();
  const server = net.createServer((socket) => {
    const record = records.of(socket.remotePort ?? 0);
    const handler: H2ConnectionHandler = {
      onHead(stream, fields, _neverIndexed, endStream) {
        record.set(stream.id, { head: [...fields], bodyOctets: 0, ended: endStream, trailers: false });
        if (endStream) answer(stream);
      },
      onOversizedHead(stream) {
        connection.respond(stream, [":status", "431", "content-length", "0"], true);
      },
      onData(stream, source, start, end, endStream) {
        const data = source.subarray(start, end);
        const seen = record.get(stream.id);
        if (seen !== undefined) {
          seen.bodyOctets += data.length;
          seen.ended ||= endStream;
        }
        connection.consume(stream, data.length);
        if (endStream) answer(stream);
      },
      onTrailers(stream) {
        const seen = record.get(stream.id);
        if (seen !== undefined) seen.ended = seen.trailers = true;
        answer(stream);
      },
      onReset() {},
      onStreamEnd() {},
      onWritable() {},
      onGoaway() {},
      onClose() {},
      onFault(error) {
        // A fault is ours, never the peer's: the differential fails on it.
        record.set(-1, { head: ["fault", String(error)], bodyOctets: 0, ended: false, trailers: false });
      },
    };
    const connection = connectionOnSocket(socket, handler, { role: "server", clock: () => performance.now(), maxConcurrentStreams: MAX_CONCURRENT_STREAMS, maxHeaderListSize: MAX_HEADER_LIST_SIZE }, () => {});
    const answer = (stream: Parameters<H2ConnectionHandler["onHead"]>[0]): void => {
      connection.respond(stream, [":status", "200", "content-type", "text/plain", "content-length", String(ANSWER_BODY.length)], false);
      connection.sendData(stream, ANSWER_BODY, true);
    };
  });
  const sockets = trackSockets(server);
  return listen(server, sockets, records);
}

/** A node:http2 server (nghttp2) with the same limits, answering the same way. */
export async function startNodeServer(): Promise<RecordingServer> {
  const records = new Records();
  // node's own cap of 128 fields (maxHeaderListPairs) is raised: the oracle is nghttp2's rules, the codec's cap is the 16 KiB list.
  const server = http2.createServer({ settings: { maxConcurrentStreams: MAX_CONCURRENT_STREAMS, maxHeaderListSize: MAX_HEADER_LIST_SIZE }, maxHeaderListPairs: 4096 });
  server.on("stream", (stream: http2.ServerHttp2Stream, _headers: http2.IncomingHttpHeaders, _flags: number, rawHeaders: string[]) => {
    // node 24 hands a session's error to its open streams as 'error' events.
    stream.on("error", () => {});
    const record = records.of(stream.session?.socket?.remotePort ?? 0);
    const seen: AppStream = { head: [...rawHeaders], bodyOctets: 0, ended: false, trailers: false };
    record.set(stream.id ?? 0, seen);
    stream.on("data", (chunk: Buffer) => (seen.bodyOctets += chunk.length));
    stream.on("trailers", () => (seen.trailers = true));
    // node ends the readable side of a stream the client reset too: the comparison leaves those out.
    stream.on("end", () => {
      seen.ended = true;
      if (stream.destroyed || stream.closed) return;
      stream.respond({ ":status": 200, "content-type": "text/plain", "content-length": ANSWER_BODY.length });
      stream.end(ANSWER_BODY);
    });
  });
  server.on("sessionError", () => {});
  server.on("session", (session) => session.on("error", () => {}));
  const sockets = trackSockets(server);
  return listen(server, sockets, records);
}
