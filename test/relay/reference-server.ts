// The request fuzz's reference: a plain node:http server with the daemon's options, recording for each connection what its parser accepted and where it stopped.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Test } from "tap";

/** One request as node:http's parser accepted it. */
export interface ReferenceRequest {
  readonly method: string;
  readonly url: string;
  readonly httpVersion: string;
  readonly rawHeaders: readonly string[];
  /** Body bytes the parser delivered (all of them once `complete`). */
  readonly body: readonly Buffer[];
  /** The whole message arrived. */
  readonly complete: boolean;
  /** llhttp's verdict: the connection may carry another request after this one. */
  readonly keepAlive: boolean;
  /** An `Expect` other than 100-continue on HTTP/1.1: node:http answers 417 itself. */
  readonly expectationFailed: boolean;
  /** An upgrade or CONNECT: the daemon takes another path for these (not compared). */
  readonly upgrade: boolean;
}

/** What node:http made of one connection's bytes. */
export interface ReferenceVerdict {
  readonly requests: readonly ReferenceRequest[];
  /** The parser's error (HPE_* code), if it refused something; HPE_INVALID_EOF_STATE: the bytes ended mid-message. */
  readonly error: string | undefined;
}

export interface ReferenceServer {
  readonly port: number;
  /** The verdict on the connections accepted since the last call (one per case: cases run one at a time). */
  take(): ReferenceVerdict[];
}

interface Recording {
  readonly requests: Array<{ readonly req: IncomingMessage; readonly body: Buffer[]; readonly keepAlive: boolean; readonly expectationFailed: boolean; readonly upgrade: boolean }>;
  error: string | undefined;
}

/**
 * The server options are the daemon's as of node:http's last day in src/http/server.ts (copied,
 * not imported: the relay replaces that file), with the parser strict and the default 16 KiB
 * header limit, except `requireHostHeader: false`: node:http answers a Host-less HTTP/1.1
 * request 400 without telling anyone, so the reference lets it through and the oracle applies
 * that rule itself.
 */
export async function startReferenceServer(t: Test): Promise<ReferenceServer> {
  let recordings: Recording[] = [];
  const recordingOf = new WeakMap<object, Recording>();
  const record = (req: IncomingMessage, res: ServerResponse | undefined, kind: "request" | "expectation" | "upgrade") => {
    const body: Buffer[] = [];
    recordingOf.get(req.socket)?.requests.push({ req, body, keepAlive: res?.shouldKeepAlive ?? false, expectationFailed: kind === "expectation", upgrade: kind === "upgrade" });
    req.on("data", (chunk: Buffer) => body.push(chunk));
    req.on("error", () => {});
  };
  const server = createServer(
    {
      headersTimeout: 10_000,
      requestTimeout: 0,
      connectionsCheckingInterval: 1_000,
      noDelay: true,
      insecureHTTPParser: false,
      requireHostHeader: false,
    },
    // Never answered: an answer lets node:http end the connection (HTTP/1.0, a 0.9 request) before
    // it has parsed what follows, and then the verdict would depend on timing, not on the bytes.
    (req, res) => record(req, res, "request"),
  );
  server.keepAliveTimeout = 620_000;
  // Recorded, not answered (the daemon's node:http answers 417 itself; the oracle knows).
  server.on("checkExpectation", (req: IncomingMessage, res: ServerResponse) => record(req, res, "expectation"));
  const upgrade = (req: IncomingMessage, socket: Socket) => {
    record(req, undefined, "upgrade");
    socket.destroy();
  };
  server.on("upgrade", upgrade);
  server.on("connect", upgrade);
  server.on("connection", (socket: Socket) => {
    const recording: Recording = { requests: [], error: undefined };
    recordings.push(recording);
    recordingOf.set(socket, recording);
  });
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Socket) => {
    const recording = recordingOf.get(socket);
    if (recording && recording.error === undefined) recording.error = error.code ?? error.message;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return {
    port: (server.address() as AddressInfo).port,
    take: () => {
      const taken = recordings;
      recordings = [];
      return taken.map(({ requests, error }) => ({
        error,
        requests: requests.map(({ req, body, keepAlive, expectationFailed, upgrade }) => ({
          method: req.method ?? "",
          url: req.url ?? "",
          httpVersion: req.httpVersion,
          rawHeaders: req.rawHeaders,
          body,
          complete: req.complete,
          keepAlive,
          expectationFailed,
          upgrade,
        })),
      }));
    },
  };
}
