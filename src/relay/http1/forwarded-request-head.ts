// The request head sent upstream, written once as octets: the client's headers minus hop-by-hop ones, X-Forwarded-* appended, the body's framing restated.
import { ForwardedFields } from "../forwarded-fields.js";
import { isNamed } from "../header-name.js";
import { NO_LISTED_NAMES, connectionListedNames, isHopByHop } from "../hop-by-hop.js";
import { headOctets } from "./head-octets.js";
import type { RequestHead } from "./request-head.js";

/** How the request body travels upstream: none, as the client's Content-Length says, or re-chunked. */
export type RequestBodyFraming = "none" | "length" | "chunked";

/** A request head for an HTTP/1.1 app, whichever protocol the client spoke: its octets and how its body follows. */
export interface ForwardedHead {
  readonly octets: Buffer;
  readonly framing: RequestBodyFraming;
}

export interface ForwardOptions {
  /** The target as the upstream gets it (path prefix applied, absolute-form reduced to its path). */
  readonly target: string;
  /** An absolute-form target's authority: replaces the client's Host (RFC 9112 §3.2.2). */
  readonly hostOverride: string | undefined;
  /** The peer's IP, appended to X-Forwarded-For. */
  readonly clientAddress: string;
  /** The upstream's authority, sent as Host when the client sent none (HTTP/1.0). */
  readonly upstreamHost: string;
  /** A WebSocket handshake keeps its Upgrade; any other upgrade is sent as plain HTTP/1.1 with `Connection: close`. */
  readonly upgrade: "websocket" | "other" | undefined;
}

/**
 * One pass over the client's headers. The body's framing is read from the same pass: llhttp has
 * already refused a request with both Content-Length and Transfer-Encoding, two lengths, or a
 * Transfer-Encoding whose last coding is not chunked.
 */
export function forwardedRequestHead(request: RequestHead, options: ForwardOptions): ForwardedHead {
  const raw = request.headers;
  let listed = NO_LISTED_NAMES;
  const out = headOctets;
  out.beginRequest(request.method, options.target);
  const forwarded = new ForwardedFields();
  let host: string | undefined;
  /** The Host the client sent, whatever becomes of it: X-Forwarded-Host tells the app. */
  let clientHost: string | undefined;
  let framing: RequestBodyFraming = "none";
  let contentLength: string | undefined;
  // Connection first: the names it lists are hop-by-hop too, wherever they stand.
  const connection = request.joined("connection");
  if (connection !== undefined) listed = connectionListedNames(connection);
  for (let index = 0; index < raw.length; index += 2) {
    const name = raw[index]!;
    const value = raw[index + 1]!;
    switch (name.length) {
      case 4:
        if (isNamed(name, "host")) {
          clientHost ??= value;
          // A Host the client's Connection lists is hop-by-hop too: the upstream's is sent instead.
          if (options.hostOverride !== undefined || listed.has("host")) continue;
          host ??= value;
        }
        break;
      case 14:
        // Restated after the loop: framing is ours to send, even when Connection lists it.
        if (isNamed(name, "content-length")) {
          contentLength = value;
          if (value !== "0") framing = "length";
          continue;
        }
        break;
      case 17:
        if (isNamed(name, "transfer-encoding")) {
          framing = "chunked";
          continue;
        }
        if (forwarded.collect(name, value)) continue;
        break;
      case 15:
      case 16:
        if (forwarded.collect(name, value)) continue;
        break;
    }
    if (isHopByHop(name, listed)) continue;
    out.put(name);
    out.put(": ");
    out.put(value);
    out.put("\r\n");
  }
  const upstreamHost = options.hostOverride ?? (host === undefined ? options.upstreamHost : undefined);
  if (upstreamHost !== undefined) {
    out.put("host: ");
    out.put(upstreamHost);
    out.put("\r\n");
  }
  forwarded.writeLines(out, options.clientAddress, options.hostOverride ?? clientHost);
  if (framing === "chunked") out.put("transfer-encoding: chunked\r\n");
  else if (contentLength !== undefined) {
    out.put("content-length: ");
    out.put(contentLength);
    out.put("\r\n");
  }
  if (options.upgrade === "websocket") out.put("connection: Upgrade\r\nupgrade: websocket\r\n");
  else if (options.upgrade === "other") out.put("connection: close\r\n");
  out.put("\r\n");
  return { octets: out.finish(), framing };
}
