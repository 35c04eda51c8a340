// The app's response head (and either side's trailers) as the other h2 side gets them, as the codec's flat lists: hop-by-hop fields dropped, names lower-cased, repeats kept where HTTP/2 allows them.
import { NO_LISTED_NAMES, connectionListedNames, isHopByHop } from "../hop-by-hop.js";

/** Fields of one value (node:http2's list): of a second one, the first wins, as most clients read it. */
export const SINGLE_VALUE: ReadonlySet<string> = new Set([
  "age", "authorization", "content-encoding", "content-language", "content-length", "content-location", "content-md5",
  "content-range", "content-type", "date", "etag", "expires", "from", "last-modified", "location", "max-forwards",
  "proxy-authorization", "referer", "retry-after", "user-agent", "x-content-type-options",
  "access-control-allow-credentials", "access-control-max-age", "access-control-request-method",
]);

/**
 * An h2c app's head or trailers, or a client's trailers (the codec's flat lists), for the other
 * side: `:status` kept, other pseudo-headers and the connection-specific fields the codec refuses
 * to send dropped, the first of a repeated single-value field kept, other repeats kept in order.
 * A new list (the receiver may add to it).
 */
export function relayedFields(fields: readonly string[]): string[] {
  const out: string[] = [];
  for (let index = 0; index < fields.length; index += 2) {
    const name = fields[index]!;
    if (name.charCodeAt(0) === 0x3a /* ":" */ ? name !== ":status" : isHopByHop(name, NO_LISTED_NAMES)) continue;
    if (repeatedSingle(name, out)) continue;
    out.push(name, fields[index + 1]!);
  }
  return out;
}

/**
 * An HTTP/1.1 app's head (llhttp's flat list) for an h2 client, as the codec's flat list: names
 * lower-cased, hop-by-hop fields (and those Connection lists) and Host dropped, the first of a
 * repeated single-value field kept; a 204 loses its content-length (RFC 9110 §8.6).
 */
export function h1ToH2Fields(status: number, headers: readonly string[]): string[] {
  let connection: string[] | undefined;
  for (let index = 0; index < headers.length; index += 2) {
    if (headers[index]!.toLowerCase() === "connection") (connection ??= []).push(headers[index + 1]!);
  }
  const listed = connection === undefined ? NO_LISTED_NAMES : connectionListedNames(connection);
  const out: string[] = [":status", String(status)];
  for (let index = 0; index < headers.length; index += 2) {
    const name = headers[index]!.toLowerCase();
    if (isHopByHop(name, listed) || name === "host") continue;
    if (status === 204 && name === "content-length") continue;
    if (repeatedSingle(name, out)) continue;
    out.push(name, headers[index + 1]!);
  }
  return out;
}

/**
 * A second `name` of a single-value field (dropped: the first wins): the list made so far (`out`,
 * name, value, ...) has it already. Looked up there rather than in a list of names seen, which
 * was an array made for every head and trailers.
 */
function repeatedSingle(name: string, out: readonly string[]): boolean {
  if (!SINGLE_VALUE.has(name)) return false;
  for (let index = 0; index < out.length; index += 2) if (out[index] === name) return true;
  return false;
}
