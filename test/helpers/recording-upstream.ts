// An upstream that records every connection and byte it receives, and each request its own node:http parser made of them; answers each whole request 200 with its target as the body.
import { createServer as createHttpServer, type IncomingMessage } from "node:http";
import { createServer, type AddressInfo, type Socket } from "node:net";
import type { Test } from "tap";

/** One request as this upstream's parser saw it. */
export interface RecordedRequest {
  /** Which upstream connection (0, 1, ...) carried it. */
  readonly connection: number;
  readonly method: string;
  readonly url: string;
  readonly rawHeaders: readonly string[];
  /** Body bytes as decoded by the parser (how the proxy framed them is not visible here). */
  readonly body: Buffer[];
  /** Whether the whole message arrived; false while it is arriving and if the connection broke first. */
  complete: boolean;
}

/** What arrived between two calls of `take`. */
export interface Activity {
  readonly requests: readonly RecordedRequest[];
  /** The bytes of each connection that received any, as latin1 text. */
  readonly bytes: readonly string[];
  /** Connections opened. */
  readonly connections: number;
}

export interface RecordingUpstream {
  readonly port: number;
  readonly url: string;
  /** The errors of this upstream's parser (HPE_* codes) other than a connection cut mid-message: a proxy must never send such bytes. */
  readonly parseErrors: () => readonly string[];
  /** What arrived since the previous call (or the start), in arrival order; forgotten here, so a long fuzz run holds no history. */
  take(): Activity;
  /**
   * Destroys the open connections on which a request is unfinished or none has arrived yet,
   * and says how many there were. Once the proxy has nothing in flight there should be none:
   * one left is an upstream request the proxy forgot (its client gone), which would hold a
   * connection here forever and a graceful shutdown with it.
   */
  cutHanging(): number;
}

/**
 * Listens on 127.0.0.1:0. Each socket is handed to a node:http server for parsing, and a `data`
 * listener of our own is added after it, so every byte is recorded (node:http stops reading the
 * socket natively once someone else listens). The parser allows 64 KiB of head: a proxy that
 * accepted 16 KiB adds X-Forwarded-* to it.
 */
export async function startRecordingUpstream(t: Test): Promise<RecordingUpstream> {
  let requests: RecordedRequest[] = [];
  let received = new Map<number, Buffer[]>();
  let connections = 0;
  let opened = 0;
  const connectionOf = new WeakMap<object, number>();
  /** Per open socket: whether it owes us the end of a request (from its accept to a request's end, and again from the next head on). */
  const waiting = new Map<Socket, boolean>();
  const parseErrors: string[] = [];
  const parser = createHttpServer({ maxHeaderSize: 64 * 1024, requireHostHeader: false }, (req: IncomingMessage, res) => {
    const request: RecordedRequest = {
      connection: connectionOf.get(req.socket) ?? -1,
      method: req.method ?? "",
      url: req.url ?? "",
      rawHeaders: req.rawHeaders,
      body: [],
      complete: false,
    };
    requests.push(request);
    const socket = req.socket as Socket;
    if (waiting.has(socket)) waiting.set(socket, true);
    req.on("data", (chunk: Buffer) => request.body.push(chunk));
    req.on("error", () => {});
    req.on("end", () => {
      request.complete = true;
      if (waiting.has(socket)) waiting.set(socket, false);
      const body = Buffer.from(request.url, "latin1");
      res.writeHead(200, { "content-length": body.length });
      res.end(body);
    });
  });
  parser.on("clientError", (error: NodeJS.ErrnoException, socket: Socket) => {
    // A proxy aborting a request it had begun to forward cuts it short: that is no parse error.
    if (error.code?.startsWith("HPE_") && error.code !== "HPE_INVALID_EOF_STATE") parseErrors.push(error.code);
    socket.destroy();
  });
  const server = createServer((socket) => {
    const connection = connections++;
    opened++;
    connectionOf.set(socket, connection);
    waiting.set(socket, true);
    socket.on("close", () => waiting.delete(socket));
    parser.emit("connection", socket);
    socket.prependListener("data", (chunk: Buffer) => {
      const chunks = received.get(connection);
      if (chunks) chunks.push(chunk);
      else received.set(connection, [chunk]);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => {
    for (const socket of waiting.keys()) socket.destroy();
    server.close();
    parser.close();
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    parseErrors: () => parseErrors,
    take: () => {
      const activity = {
        requests,
        bytes: [...received.values()].map((chunks) => Buffer.concat(chunks).toString("latin1")),
        connections: opened,
      };
      requests = [];
      received = new Map();
      opened = 0;
      return activity;
    },
    cutHanging: () => {
      let cut = 0;
      for (const [socket, owes] of waiting) {
        if (!owes) continue;
        cut++;
        socket.destroy();
      }
      return cut;
    },
  };
}
