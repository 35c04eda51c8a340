// HTTP upgrades (WebSocket): the handshake goes to the upstream as a request; only a 101 to the protocol asked for becomes a byte tunnel.
import { request, type ClientRequest, type IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Upstream } from "../config/upstream-url.js";
import { errorCode } from "../errors.js";
import { jsonErrorBody } from "./error-response.js";
import type { ProxyErrorLog } from "./proxy-error-log.js";
import { requestHeaders } from "./forwarded-headers.js";
import { NO_LISTED_NAMES, connectionListedNames, isHopByHop } from "./hop-by-hop.js";
import type { ProxyObserver } from "./proxy-observer.js";
import { requestIdOf } from "./request-id.js";

export interface UpgradeTunnelOptions {
  readonly upstream: Upstream;
  readonly errorLog: ProxyErrorLog;
  /** The upstream must answer the handshake within this, else 504 (as for any request). */
  readonly responseHeaderTimeoutMs: number;
  /** Counts open tunnels (metrics), or NO_PROXY_OBSERVER. */
  readonly observer: ProxyObserver;
}

/** Statuses whose response never has a body (RFC 9110 §6.4.1). */
const NO_BODY_STATUSES = new Set([204, 304]);

/**
 * Handles node:http's `upgrade` event. The handshake is sent with node's HTTP client, whose
 * parser tells a `101` apart from any other answer. Only a `101` whose `Upgrade` names the
 * protocol the client asked for (WebSocket) turns the connection into a raw tunnel; any other
 * answer (401/403 of an auth-gated socket, 400, 200) is relayed as an ordinary response with
 * hop-by-hop headers removed and `Connection: close`, and the client's connection is closed
 * after it. Relaying a refusal byte for byte instead would leave a raw pipe behind it: later
 * requests on that connection would reach the app unfiltered ("WebSocket smuggling").
 * Other protocols (`h2c`) are not ours to switch: the request goes up as plain HTTP/1.1.
 */
export function createUpgradeTunnel({ upstream, errorLog, responseHeaderTimeoutMs, observer }: UpgradeTunnelOptions) {
  const target = new URL(upstream.origin);
  const host = target.hostname.replace(/^\[(.*)\]$/, "$1");
  const port = Number(target.port || 80);
  const clients = new Set<Duplex>();

  const handle = (req: IncomingMessage, client: Duplex, head: Buffer): void => {
    clients.add(client);
    client.once("close", () => clients.delete(client));
    const isWebSocket = (req.headers.upgrade ?? "").toLowerCase() === "websocket";
    const bodyLength = declaredBodyLength(req);
    if (bodyLength === undefined) {
      // node:http leaves an upgrade's body unparsed; a chunked one cannot be re-framed here.
      writeRawError(client, 501, "Not Implemented", requestIdOf(req), "an upgrade request with a chunked body is not supported");
      return;
    }
    const headers = requestHeaders(req);
    if (isWebSocket) headers.push("connection", "Upgrade", "upgrade", "websocket");
    else headers.push("connection", "close");
    if (bodyLength > 0) headers.push("content-length", String(bodyLength));
    const upstreamRequest = request({
      host,
      port,
      method: req.method,
      path: upstream.pathPrefix + (req.url ?? "/"),
      headers,
      setHost: false,
      agent: false,
    });
    let answered = false;
    const headTimer = setTimeout(() => {
      upstreamRequest.destroy(Object.assign(new Error("upstream response head timed out"), { code: "UND_ERR_HEADERS_TIMEOUT" }));
    }, responseHeaderTimeoutMs);
    const settle = () => {
      answered = true;
      clearTimeout(headTimer);
    };
    upstreamRequest.on("error", (error) => {
      clearTimeout(headTimer);
      if (answered) {
        client.destroy();
        return;
      }
      answered = true;
      const timedOut = errorCode(error) === "UND_ERR_HEADERS_TIMEOUT";
      const status = timedOut ? 504 : 502;
      const requestId = requestIdOf(req);
      errorLog.proxyError(req, requestId, status, error, timedOut ? "upstream response head timed out" : "upstream unavailable");
      writeRawError(client, status, timedOut ? "Gateway Timeout" : "Bad Gateway", requestId);
    });
    client.on("error", () => upstreamRequest.destroy());
    client.once("close", () => upstreamRequest.destroy());

    upstreamRequest.on("upgrade", (res: IncomingMessage, upstreamSocket: Duplex, upgradeHead: Buffer) => {
      settle();
      if (!isWebSocket || (res.headers.upgrade ?? "").toLowerCase() !== "websocket") {
        upstreamSocket.destroy();
        const requestId = requestIdOf(req);
        errorLog.proxyError(req, requestId, 502, new Error(`upstream switched to ${JSON.stringify(res.headers.upgrade ?? "")}`), "upstream switched to a protocol that was not asked for");
        writeRawError(client, 502, "Bad Gateway", requestId);
        return;
      }
      // The handshake's own Upgrade and Connection pass; other hop-by-hop headers do not.
      client.write(rawHead(101, res.statusMessage ?? "Switching Protocols", withoutHopByHop(res.rawHeaders, ["upgrade", "connection"])));
      if (upgradeHead.length > 0) client.write(upgradeHead);
      if (head.length > 0) upstreamSocket.write(head);
      observer.tunnelOpened();
      client.once("close", () => observer.tunnelClosed());
      upstreamSocket.on("error", () => client.destroy());
      upstreamSocket.once("close", () => client.end());
      client.once("close", () => upstreamSocket.destroy());
      client.pipe(upstreamSocket);
      upstreamSocket.pipe(client);
    });

    upstreamRequest.on("response", (res: IncomingMessage) => {
      settle();
      const headers = withoutHopByHop(res.rawHeaders, []);
      headers.push("connection", "close");
      const status = res.statusCode ?? 502;
      client.write(rawHead(status, res.statusMessage ?? "", headers));
      if (req.method === "HEAD" || NO_BODY_STATUSES.has(status)) {
        res.resume();
        client.end();
        return;
      }
      // Without its length the body ends when the connection closes, which it does now anyway.
      res.on("error", () => client.destroy());
      res.pipe(client);
    });

    if (bodyLength > 0) sendBody(head, client, bodyLength, upstreamRequest);
    else upstreamRequest.end();
  };

  /** Ends every open tunnel and handshake (at the end of shutdown: upgraded sockets are not the server's to close). */
  const closeAll = (): void => {
    for (const client of clients) client.destroy();
  };

  return { handle, closeAll };
}

/** The request body's length: 0 for none, undefined for a chunked one. */
function declaredBodyLength(req: IncomingMessage): number | undefined {
  if (req.headers["transfer-encoding"] !== undefined) return undefined;
  const length = req.headers["content-length"];
  return length === undefined ? 0 : Number(length);
}

/**
 * Copies exactly `length` body bytes (those that came with the head, then the client's
 * socket) to the upstream request. Bytes past the body belong to a next request on the
 * connection, which is never forwarded: the connection closes after this response.
 */
function sendBody(head: Buffer, client: Duplex, length: number, upstreamRequest: ClientRequest): void {
  let remaining = length;
  const take = (chunk: Buffer): boolean => {
    const part = chunk.length > remaining ? chunk.subarray(0, remaining) : chunk;
    remaining -= part.length;
    if (remaining === 0) upstreamRequest.end(part);
    else upstreamRequest.write(part);
    return remaining === 0;
  };
  if (head.length > 0 && take(head)) return;
  const onData = (chunk: Buffer) => {
    if (take(chunk)) client.off("data", onData);
  };
  client.on("data", onData);
}

/** `[name, value, ...]` minus hop-by-hop names, except those in `kept` (lower-case). */
function withoutHopByHop(rawHeaders: readonly string[], kept: readonly string[]): string[] {
  const connection: string[] = [];
  for (let index = 0; index < rawHeaders.length; index += 2) {
    if (rawHeaders[index]!.toLowerCase() === "connection") connection.push(rawHeaders[index + 1]!);
  }
  const listed = connection.length === 0 ? NO_LISTED_NAMES : connectionListedNames(connection);
  const headers: string[] = [];
  for (let index = 0; index < rawHeaders.length; index += 2) {
    const name = rawHeaders[index]!;
    if (kept.includes(name.toLowerCase()) || !isHopByHop(name, listed)) headers.push(name, rawHeaders[index + 1]!);
  }
  return headers;
}

/** A response head written by hand: the socket is no longer node:http's. */
function rawHead(status: number, statusText: string, headers: readonly string[]): string {
  let head = `HTTP/1.1 ${status} ${statusText}\r\n`;
  for (let index = 0; index < headers.length; index += 2) head += `${headers[index]}: ${headers[index + 1]}\r\n`;
  return `${head}\r\n`;
}

/** A proxy-made error as the JSON envelope of CONTRACT §6, then the connection is closed. */
function writeRawError(client: Duplex, status: number, statusText: string, requestId: string, message?: string): void {
  const body = message === undefined ? jsonErrorBody(status, requestId) : Buffer.from(JSON.stringify({ error: { code: status, message, requestId } }));
  client.write(
    rawHead(status, statusText, [
      "content-type",
      "application/json",
      "cache-control",
      "no-store",
      "x-request-id",
      requestId,
      "content-length",
      String(body.length),
      "connection",
      "close",
    ]),
  );
  client.end(body);
}
