// The h2c header fields an HTTP/1.1 request is sent to an h2c app with (`--upstream-protocol h2c`), built in one pass over its head.
import { ForwardedFields } from "../forwarded-fields.js";
import { NO_LISTED_NAMES, connectionListedNames, isHopByHop } from "../hop-by-hop.js";
import type { RequestHead } from "../http1/request-head.js";
import type { H2ForwardOptions } from "../http2/h2-forward-headers.js";

/**
 * An HTTP/1.1 request as h2c header fields (`--upstream-protocol h2c`), the codec's flat list:
 * Host becomes `:authority`, names are lower-cased, hop-by-hop fields (and those its Connection
 * lists) and the framing fields are dropped, X-Forwarded-* appended. As on the HTTP/1.1 path
 * (forwarded-request-head.ts): `hostOverride`, an absolute-form target's authority, replaces
 * Host; a Host the client's Connection lists is hop-by-hop, so the upstream's goes instead; either
 * way X-Forwarded-Host says what the client named.
 */
export function h1ToH2cFields(request: RequestHead, target: string, hostOverride: string | undefined, options: Omit<H2ForwardOptions, "target">): string[] {
  const connection = request.joined("connection");
  const listed = connection === undefined ? NO_LISTED_NAMES : connectionListedNames([connection]);
  const clientHost = request.header("host");
  const authority = hostOverride ?? (listed.has("host") ? undefined : clientHost);
  const out = [":method", request.method, ":path", target, ":scheme", "http", ":authority", authority ?? options.upstreamHost];
  const forwarded = new ForwardedFields();
  const raw = request.headers;
  for (let index = 0; index < raw.length; index += 2) {
    const name = raw[index]!.toLowerCase();
    const value = raw[index + 1]!;
    if (name === "host" || name === "content-length") continue;
    if (forwarded.collect(name, value)) continue;
    if (isHopByHop(name, listed)) continue;
    out.push(name, value);
  }
  const contentLength = request.header("content-length");
  if (contentLength !== undefined) out.push("content-length", contentLength);
  forwarded.appendFields(out, options.clientAddress, hostOverride ?? clientHost);
  return out;
}
