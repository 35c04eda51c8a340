// The app's response head as the h2 client gets it: hop-by-hop fields dropped, names lower-cased, repeats kept where HTTP/2 allows them.
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http2";
import { NO_LISTED_NAMES, connectionListedNames, isHopByHop } from "../hop-by-hop.js";

/** Fields of one value (node:http2's list): of a second one, the first wins, as most clients read it. */
export const SINGLE_VALUE: ReadonlySet<string> = new Set([
  "age", "authorization", "content-encoding", "content-language", "content-length", "content-location", "content-md5",
  "content-range", "content-type", "date", "etag", "expires", "from", "last-modified", "location", "max-forwards",
  "proxy-authorization", "referer", "retry-after", "user-agent", "x-content-type-options",
  "access-control-allow-credentials", "access-control-max-age", "access-control-request-method",
]);

/** An h2c app's response (or trailers) for the client: its fields minus connection-specific ones nghttp2 would refuse to send. */
export function relayedH2Headers(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const name of Object.keys(headers)) {
    if (name.charCodeAt(0) === 0x3a /* ":" */ && name !== ":status") continue;
    if (isHopByHop(name, NO_LISTED_NAMES)) continue;
    out[name] = headers[name];
  }
  return out;
}

/** A client's trailers (the codec's flat list) for an h2c app: as {@link relayedH2Headers}, repeats kept. */
export function relayedH2Fields(fields: readonly string[]): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (let index = 0; index < fields.length; index += 2) {
    const name = fields[index]!;
    if (name.charCodeAt(0) === 0x3a /* ":" */ || isHopByHop(name, NO_LISTED_NAMES)) continue;
    const value = fields[index + 1]!;
    const existing = out[name];
    if (existing === undefined) out[name] = value;
    else if (Array.isArray(existing)) existing.push(value);
    else out[name] = [String(existing), value];
  }
  return out;
}

/** An HTTP/1.1 app's head (llhttp's flat list) for an h2 client; a 204 loses its content-length (RFC 9110 §8.6). */
export function h1ToH2Headers(status: number, headers: readonly string[]): OutgoingHttpHeaders {
  let connection: string[] | undefined;
  for (let index = 0; index < headers.length; index += 2) {
    if (headers[index]!.toLowerCase() === "connection") (connection ??= []).push(headers[index + 1]!);
  }
  const listed = connection === undefined ? NO_LISTED_NAMES : connectionListedNames(connection);
  const out: OutgoingHttpHeaders = { ":status": status };
  for (let index = 0; index < headers.length; index += 2) {
    const name = headers[index]!.toLowerCase();
    if (isHopByHop(name, listed) || name === "host") continue;
    if (status === 204 && name === "content-length") continue;
    const value = headers[index + 1]!;
    const existing = out[name];
    if (existing === undefined) out[name] = value;
    else if (SINGLE_VALUE.has(name)) continue;
    else if (Array.isArray(existing)) existing.push(value);
    else out[name] = [String(existing), value];
  }
  return out;
}
