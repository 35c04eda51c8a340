// An app's response head for an h2 client, and either side's trailers for the other h2 side, as the codec's flat lists: hop-by-hop fields dropped, names lower-cased, repeats kept where HTTP/2 allows them.
import { isNamed } from "../header-name.js";
import { NO_LISTED_NAMES, connectionListedNames, isHopByHop } from "../hop-by-hop.js";

/** Fields of one value (node:http2's list): of a second one, the first wins, as most clients read it. */
export const SINGLE_VALUE: ReadonlySet<string> = new Set([
  "age", "authorization", "content-encoding", "content-language", "content-length", "content-location", "content-md5",
  "content-range", "content-type", "date", "etag", "expires", "from", "last-modified", "location", "max-forwards",
  "proxy-authorization", "referer", "retry-after", "user-agent", "x-content-type-options",
  "access-control-allow-credentials", "access-control-max-age", "access-control-request-method",
]);

/**
 * Trailers, an h2c app's or an h2 client's (the codec's flat lists), for the other side:
 * pseudo-headers and the connection-specific fields the codec refuses
 * to send dropped, the first of a repeated single-value field kept, other repeats kept in order.
 * A new list (the receiver may add to it).
 */
export function relayedFields(fields: readonly string[]): string[] {
  const out: string[] = [];
  for (let index = 0; index < fields.length; index += 2) {
    const name = fields[index]!;
    if (name.charCodeAt(0) === 0x3a /* ":" */ || isHopByHop(name, NO_LISTED_NAMES)) continue;
    if (repeatedSingle(name, out)) continue;
    out.push(name, fields[index + 1]!);
  }
  return out;
}

/**
 * An app's head, interim or final, for an h2 client, as the codec's flat list, whichever
 * protocol the app spoke (llhttp's flat list with names as sent, or the codec's with `:status`
 * first): `:status` first, names lower-cased, pseudo-headers, Host and hop-by-hop fields (and
 * those the app's Connection lists) dropped, the first of a repeated single-value field kept; a
 * 204 loses its content-length (RFC 9110 §8.6). A new list (the stream adds its date).
 */
export function answerFields(status: number, headers: readonly string[]): string[] {
  // An h2c app's head (`:status` first: no HTTP/1.1 name starts with ":") has lower-case names
  // and no Connection, both the codec's rules: neither is looked for again.
  const fromH2 = headers[0] === ":status";
  let connection: string[] | undefined;
  if (!fromH2) {
    for (let index = 0; index < headers.length; index += 2) {
      if (isNamed(headers[index]!, "connection")) (connection ??= []).push(headers[index + 1]!);
    }
  }
  const listed = connection === undefined ? NO_LISTED_NAMES : connectionListedNames(connection);
  const out: string[] = [":status", String(status)];
  for (let index = 0; index < headers.length; index += 2) {
    const name = fromH2 ? headers[index]! : headers[index]!.toLowerCase();
    if (name.charCodeAt(0) === 0x3a /* ":" */ || isHopByHop(name, listed) || name === "host") continue;
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
