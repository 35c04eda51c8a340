// HTTP upgrades (WebSocket): the request is replayed to the upstream on a new connection, then bytes flow both ways untouched.
import type { IncomingMessage } from "node:http";
import { connect, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import type { Upstream } from "../config/upstream-url.js";
import { jsonErrorBody, logProxyError } from "./error-response.js";
import { requestHeaders } from "./forwarded-headers.js";
import { requestIdOf } from "./request-id.js";

/** How long the upstream may take to accept the connection. */
const CONNECT_TIMEOUT_MS = 10_000;

export interface UpgradeTunnelOptions {
  readonly upstream: Upstream;
  readonly log: Logger;
}

/**
 * Handles node:http's `upgrade` event. A WebSocket handshake is forwarded with its `Upgrade`
 * and `Connection: Upgrade` (hop-by-hop everywhere else) and X-Forwarded-* appended; whatever
 * the upstream answers (101 and frames, or a refusal) is relayed byte for byte. Any other
 * protocol (`h2c`) is not ours to switch: the request goes up as plain HTTP/1.1 with
 * `Connection: close`, and its one response comes back.
 */
export function createUpgradeTunnel({ upstream, log }: UpgradeTunnelOptions) {
  const target = new URL(upstream.origin);
  const host = target.hostname.replace(/^\[(.*)\]$/, "$1");
  const port = Number(target.port || 80);
  const tunnels = new Set<Socket>();

  const handle = (req: IncomingMessage, client: Duplex, head: Buffer): void => {
    const isWebSocket = (req.headers.upgrade ?? "").toLowerCase() === "websocket";
    const headers = requestHeaders(req);
    if (isWebSocket) headers.push("connection", "Upgrade", "upgrade", "websocket");
    else headers.push("connection", "close");
    // The body, if any, is relayed as raw bytes, so its framing header must go with it.
    const framing = req.headers["transfer-encoding"];
    if (framing !== undefined) headers.push("transfer-encoding", framing);
    const upstreamSocket = connect({ host, port, timeout: CONNECT_TIMEOUT_MS });
    tunnels.add(upstreamSocket);
    let connected = false;
    const fail = (error: Error) => {
      if (connected) {
        client.destroy();
        return;
      }
      const requestId = requestIdOf(req);
      logProxyError(log, req, requestId, 502, error, "upstream unavailable");
      // The socket is no longer node:http's, so the response is written by hand.
      const body = jsonErrorBody(502, requestId);
      client.write(
        `HTTP/1.1 502 Bad Gateway\r\ncontent-type: application/json\r\ncache-control: no-store\r\n` +
          `x-request-id: ${requestId}\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n`,
      );
      client.end(body);
    };
    upstreamSocket.once("timeout", () => upstreamSocket.destroy(Object.assign(new Error("connect timed out"), { code: "ETIMEDOUT" })));
    upstreamSocket.on("error", fail);
    upstreamSocket.once("close", () => {
      tunnels.delete(upstreamSocket);
      client.end();
    });
    client.on("error", () => upstreamSocket.destroy());
    client.once("close", () => upstreamSocket.destroy());
    upstreamSocket.once("connect", () => {
      connected = true;
      upstreamSocket.setTimeout(0);
      upstreamSocket.setNoDelay(true);
      let handshake = `${req.method} ${upstream.pathPrefix}${req.url} HTTP/1.1\r\n`;
      for (let index = 0; index < headers.length; index += 2) handshake += `${headers[index]}: ${headers[index + 1]}\r\n`;
      upstreamSocket.write(`${handshake}\r\n`);
      if (head.length > 0) upstreamSocket.write(head);
      client.pipe(upstreamSocket);
      upstreamSocket.pipe(client);
    });
  };

  /** Ends every open tunnel (at the end of shutdown: upgraded sockets are not the server's to close). */
  const closeAll = (): void => {
    for (const socket of tunnels) socket.destroy();
  };

  return { handle, closeAll };
}
