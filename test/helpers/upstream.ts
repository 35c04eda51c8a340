// A real upstream for proxy tests: node:http on 127.0.0.1:0, with a per-test handler and a record of what arrived.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Test } from "tap";

export interface ReceivedRequest {
  readonly method: string;
  readonly url: string;
  readonly rawHeaders: string[];
  readonly headers: IncomingMessage["headers"];
  readonly body: Buffer;
}

export interface TestUpstream {
  readonly port: number;
  readonly url: string;
  readonly received: ReceivedRequest[];
  /** Replaces how requests are answered; the default echoes 200 "ok". */
  handle(handler: (req: IncomingMessage, res: ServerResponse, body: Buffer) => void): void;
  /** Replaces the raw handler: called at once, before the body is read (streaming tests); if it rejects, the response is destroyed. */
  handleRaw(handler: (req: IncomingMessage, res: ServerResponse) => unknown): void;
}

export async function startUpstream(t: Test): Promise<TestUpstream> {
  const received: ReceivedRequest[] = [];
  let handler = (_req: IncomingMessage, res: ServerResponse, _body: Buffer) => {
    res.end("ok");
  };
  let rawHandler: ((req: IncomingMessage, res: ServerResponse) => unknown) | undefined;
  const server = createServer((req, res) => {
    if (rawHandler) {
      const answering = rawHandler(req, res);
      if (answering instanceof Promise) answering.catch((error: unknown) => res.destroy(error as Error));
      return;
    }
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      received.push({ method: req.method ?? "", url: req.url ?? "", rawHeaders: req.rawHeaders, headers: req.headers, body });
      handler(req, res, body);
    });
  });
  const port = await serveOnLoopback(t, server);
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    received,
    handle: (next) => {
      handler = next;
      rawHandler = undefined;
    },
    handleRaw: (next) => {
      rawHandler = next;
    },
  };
}

/** Listens on 127.0.0.1:0 until `t` ends (then every connection is closed); resolves with the port. */
export async function serveOnLoopback(t: Test, server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return (server.address() as AddressInfo).port;
}
