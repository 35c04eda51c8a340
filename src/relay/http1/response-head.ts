// Response heads written to the client, built once as one string: the upstream's minus hop-by-hop ones, with our own framing and connection headers.
import { httpDate } from "../http-date.js";
import { NO_LISTED_NAMES, connectionListedNames, isHopByHop } from "../hop-by-hop.js";
import { statusText } from "./status-text.js";

/**
 * How the response body reaches the client: as the upstream's Content-Length says, re-chunked
 * (chunked or close-delimited upstream, HTTP/1.1 client), delimited by our close (HTTP/1.0
 * client), or no body at all (HEAD, 204, 304, 1xx).
 */
export type ResponseFraming = "length" | "chunked" | "close" | "none";

/** What the head's single pass over the upstream's headers found. */
export interface UpstreamHeaderFacts {
  readonly hasContentLength: boolean;
  readonly hasDate: boolean;
}

/** The idle time after which we close a client connection (see relay-server.ts), told to clients as node:http does. */
export const CLIENT_KEEP_ALIVE_SECONDS = 620;

const KEEP_ALIVE_LINES = `connection: keep-alive\r\nkeep-alive: timeout=${CLIENT_KEEP_ALIVE_SECONDS}\r\n`;
const CLOSE_LINE = "connection: close\r\n";

/** Facts about the upstream's headers the framing decision needs, in one pass. */
export function upstreamHeaderFacts(headers: readonly string[]): UpstreamHeaderFacts {
  let hasContentLength = false;
  let hasDate = false;
  for (let index = 0; index < headers.length; index += 2) {
    const name = headers[index]!;
    if (name.length === 14 && name.toLowerCase() === "content-length") hasContentLength = true;
    else if (name.length === 4 && name.toLowerCase() === "date") hasDate = true;
  }
  return { hasContentLength, hasDate };
}

/**
 * The upstream's response head for the client. `keep` lists hop-by-hop names that pass anyway
 * (a WebSocket 101's Upgrade and Connection). A 204 loses any Content-Length (RFC 9110 §8.6).
 */
export function relayedResponseHead(
  status: number,
  statusMessage: string,
  headers: readonly string[],
  facts: UpstreamHeaderFacts,
  framing: ResponseFraming,
  keepAlive: boolean,
  keep?: readonly string[],
): string {
  let connection: string[] | undefined;
  for (let index = 0; index < headers.length; index += 2) {
    const name = headers[index]!;
    if (name.length === 10 && name.toLowerCase() === "connection") (connection ??= []).push(headers[index + 1]!);
  }
  const listed = connection === undefined ? NO_LISTED_NAMES : connectionListedNames(connection);
  // The connection's fate first, as node:http put a Connection header set before writeHead.
  let text = `HTTP/1.1 ${status} ${statusMessage || statusText(status)}\r\n${status < 200 ? "" : keepAlive ? KEEP_ALIVE_LINES : CLOSE_LINE}`;
  for (let index = 0; index < headers.length; index += 2) {
    const name = headers[index]!;
    if (isHopByHop(name, listed) && !(keep !== undefined && keep.includes(name.toLowerCase()))) continue;
    if (status === 204 && name.length === 14 && name.toLowerCase() === "content-length") continue;
    text += `${name}: ${headers[index + 1]!}\r\n`;
  }
  if (!facts.hasDate) text += `date: ${httpDate()}\r\n`;
  if (framing === "chunked") text += "transfer-encoding: chunked\r\n";
  return `${text}\r\n`;
}

/** A head of our own (health paths, proxy-made errors): the given headers, Date and the connection's fate. */
export function ownResponseHead(status: number, headers: readonly string[], keepAlive: boolean): string {
  let text = `HTTP/1.1 ${status} ${statusText(status)}\r\n${keepAlive ? KEEP_ALIVE_LINES : CLOSE_LINE}`;
  for (let index = 0; index < headers.length; index += 2) text += `${headers[index]!}: ${headers[index + 1]!}\r\n`;
  return `${text}date: ${httpDate()}\r\n\r\n`;
}
