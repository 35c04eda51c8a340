// The request head an HTTP/1.1 app is sent, whichever protocol the client spoke, written once as octets from the client's decoded head and the plan: the client's fields as sent minus hop-by-hop ones, X-Forwarded-* appended, the body's framing restated.
import { ForwardedFields } from "../forwarded-fields.js";
import type { ClientRequest, Forwarding } from "../forward-plan.js";
import { isNamed } from "../header-name.js";
import { isHopByHop } from "../hop-by-hop.js";
import { headOctets } from "./head-octets.js";

/** How the request body travels upstream: none, as the client's Content-Length says, or (re-)chunked. */
export type RequestBodyFraming = "none" | "length" | "chunked";

/** A request head for an HTTP/1.1 app, whichever protocol the client spoke: its octets and how its body follows. */
export interface ForwardedHead {
  readonly octets: Buffer;
  readonly framing: RequestBodyFraming;
}

/**
 * One pass over the client's fields (an HTTP/1.1 client's case kept: no translation on the
 * HTTP/1.1 path). The Host the plan sends stays where the client put it; another authority (an
 * absolute-form target's, the upstream's, an h2 client's `:authority`) is written after the
 * fields. An h2 client's cookie crumbs are joined with `; ` (RFC 9113 §8.2.3). The body's
 * framing is read from the same pass: llhttp has already refused a request with both
 * Content-Length and Transfer-Encoding, two lengths, or a Transfer-Encoding whose last coding
 * is not chunked; an h2 body without a content-length is chunked.
 */
export function forwardedRequestHead(request: ClientRequest, plan: Forwarding, clientAddress: string, upstreamHost: string): ForwardedHead {
  const raw = request.headers;
  const listed = plan.listed;
  const authority = plan.authority;
  const joinsCookies = request.protocol === "HTTP/2";
  const out = headOctets;
  out.beginRequest(request.method, plan.target);
  const forwarded = new ForwardedFields();
  /** Whether the first Host line was the plan's authority (undefined until one is seen). */
  let hostSeen: boolean | undefined;
  let hostWritten = false;
  let cookie: string | undefined;
  let framing: RequestBodyFraming = "none";
  let contentLength: string | undefined;
  for (let index = 0; index < raw.length; index += 2) {
    const name = raw[index]!;
    const value = raw[index + 1]!;
    switch (name.length) {
      case 4:
        if (isNamed(name, "host")) {
          // The client's Host goes as it wrote it when it is the plan's authority; else the plan's goes after the fields.
          // (The plan has judged Host already: the Connection-listed names do not apply to it here.)
          hostSeen ??= value === authority;
          if (!hostSeen) continue;
          hostWritten = true;
          out.put(name);
          out.put(": ");
          out.put(value);
          out.put("\r\n");
          continue;
        }
        break;
      case 6:
        if (joinsCookies && name === "cookie") {
          cookie = cookie === undefined ? value : `${cookie}; ${value}`;
          continue;
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
    // An h2 client's pseudo-headers: the request line and Host say them.
    if (name.charCodeAt(0) === 0x3a /* ":" */ || isHopByHop(name, listed)) continue;
    out.put(name);
    out.put(": ");
    out.put(value);
    out.put("\r\n");
  }
  if (!hostWritten) {
    out.put("host: ");
    out.put(authority ?? upstreamHost);
    out.put("\r\n");
  }
  if (cookie !== undefined) {
    out.put("cookie: ");
    out.put(cookie);
    out.put("\r\n");
  }
  forwarded.writeLines(out, clientAddress, plan.forwardedHost);
  if (framing === "none" && contentLength === undefined && request.unframedBody) framing = "chunked";
  if (framing === "chunked") out.put("transfer-encoding: chunked\r\n");
  else if (contentLength !== undefined) {
    out.put("content-length: ");
    out.put(contentLength);
    out.put("\r\n");
  }
  if (plan.upgrade === "websocket") out.put("connection: Upgrade\r\nupgrade: websocket\r\n");
  else if (plan.upgrade === "other") out.put("connection: close\r\n");
  out.put("\r\n");
  return { octets: out.finish(), framing };
}
