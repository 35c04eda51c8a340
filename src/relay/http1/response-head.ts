// Response heads written to the client: the upstream's minus hop-by-hop ones, with our own framing and connection headers, written once as octets; our own heads as one string.
import { isNamed } from "../header-name.js";
import { httpDate } from "../http-date.js";
import { NO_LISTED_NAMES, connectionListedNames, isHopByHop } from "../hop-by-hop.js";
import { headOctets } from "./head-octets.js";
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
/** The status line's end and the connection's fate, one piece each. */
const STATUS_END_KEEP_ALIVE = `\r\n${KEEP_ALIVE_LINES}`;
const STATUS_END_CLOSE = `\r\n${CLOSE_LINE}`;

/** The four answers, made once: the facts of a head cost no object. */
const FACTS: readonly UpstreamHeaderFacts[] = [
  { hasContentLength: false, hasDate: false },
  { hasContentLength: true, hasDate: false },
  { hasContentLength: false, hasDate: true },
  { hasContentLength: true, hasDate: true },
];

/** Facts about the upstream's headers the framing decision needs, in one pass. */
export function upstreamHeaderFacts(headers: readonly string[]): UpstreamHeaderFacts {
  let hasContentLength = 0;
  let hasDate = 0;
  for (let index = 0; index < headers.length; index += 2) {
    const name = headers[index]!;
    if (isNamed(name, "content-length")) hasContentLength = 1;
    else if (isNamed(name, "date")) hasDate = 2;
  }
  return FACTS[hasContentLength | hasDate]!;
}

/**
 * An app's response head for an HTTP/1.1 client, whichever protocol the app spoke (llhttp's
 * flat list with names as sent, or the codec's, whose pseudo-headers are skipped). `keep` lists hop-by-hop names that pass anyway
 * (a WebSocket 101's Upgrade and Connection); `zeroLength` adds
 * `content-length: 0`. A 204 loses any Content-Length (RFC 9110 §8.6).
 */
export function relayedResponseHead(
  status: number,
  statusMessage: string,
  headers: readonly string[],
  facts: UpstreamHeaderFacts,
  framing: ResponseFraming,
  keepAlive: boolean,
  keep?: readonly string[],
  zeroLength = false,
): Buffer {
  // One Connection field (the usual) is passed as it is; a list is made only for a second.
  let connection: string | undefined;
  let connections: string[] | undefined;
  for (let index = 0; index < headers.length; index += 2) {
    if (!isNamed(headers[index]!, "connection")) continue;
    if (connection === undefined) connection = headers[index + 1]!;
    else (connections ??= [connection]).push(headers[index + 1]!);
  }
  const listed = connection === undefined ? NO_LISTED_NAMES : connectionListedNames(connections ?? connection);
  const out = headOctets;
  out.begin();
  out.put("HTTP/1.1 ");
  out.putStatus(status);
  out.put(" ");
  out.put(statusMessage || statusText(status));
  // The connection's fate first, as node:http put a Connection header set before writeHead.
  out.put(status < 200 ? "\r\n" : keepAlive ? STATUS_END_KEEP_ALIVE : STATUS_END_CLOSE);
  for (let index = 0; index < headers.length; index += 2) {
    const name = headers[index]!;
    // An h2c app's pseudo-headers: the status line says them.
    if (name.charCodeAt(0) === 0x3a /* ":" */) continue;
    if (isHopByHop(name, listed) && !(keep !== undefined && keep.includes(name.toLowerCase()))) continue;
    if (status === 204 && isNamed(name, "content-length")) continue;
    out.put(name);
    out.put(": ");
    out.put(headers[index + 1]!);
    out.put("\r\n");
  }
  // An h2c app's answer that ended with its HEADERS says its empty body by that alone.
  if (zeroLength) out.put("content-length: 0\r\n");
  if (!facts.hasDate) {
    out.put("date: ");
    out.put(httpDate());
    out.put("\r\n");
  }
  out.put(framing === "chunked" ? "transfer-encoding: chunked\r\n\r\n" : "\r\n");
  return out.finish();
}

/** A head of our own (health paths, proxy-made errors): the given headers, Date and the connection's fate. */
export function ownResponseHead(status: number, headers: readonly string[], keepAlive: boolean): string {
  let text = `HTTP/1.1 ${status} ${statusText(status)}\r\n${keepAlive ? KEEP_ALIVE_LINES : CLOSE_LINE}`;
  for (let index = 0; index < headers.length; index += 2) text += `${headers[index]!}: ${headers[index + 1]!}\r\n`;
  return `${text}date: ${httpDate()}\r\n\r\n`;
}
