// The request head an h2 request is sent on with, built in one pass over its fields: as h2c header fields (the codec's flat list), or as HTTP/1.1 text for an HTTP/1.1 app.
import { ForwardedFields } from "../forwarded-fields.js";
import { NO_LISTED_NAMES, connectionListedNames, isHopByHop } from "../hop-by-hop.js";
import type { RequestBodyFraming } from "../http1/forwarded-request-head.js";
import type { RequestHead } from "../http1/request-head.js";
import type { H2Request } from "./h2-request.js";

/** What both forms need besides the request: the target (path prefix applied), the peer, the upstream's authority. */
export interface H2ForwardOptions {
  readonly target: string;
  readonly clientAddress: string;
  readonly upstreamHost: string;
}

/**
 * h2c to the app, as the codec's flat list: the client's fields minus pseudo-headers, Host
 * (`:authority` says it) and hop-by-hop ones, except `te: trailers`, which gRPC needs end to end;
 * repeats kept in order. The codec has refused a request with connection-specific fields or
 * another `te` already.
 */
export function upstreamH2Fields(request: H2Request, options: H2ForwardOptions): string[] {
  const out = [":method", request.method, ":path", options.target, ":scheme", "http", ":authority", request.authority ?? options.upstreamHost];
  const forwarded = new ForwardedFields();
  const raw = request.rawHeaders;
  for (let index = 0; index < raw.length; index += 2) {
    const name = raw[index]!;
    const value = raw[index + 1]!;
    if (name.charCodeAt(0) === 0x3a /* ":" */ || name === "host") continue;
    if (forwarded.collect(name, value)) continue;
    if (name === "te") {
      if (value.trim().toLowerCase() === "trailers") out.push("te", "trailers");
      continue;
    }
    if (isHopByHop(name, NO_LISTED_NAMES)) continue;
    out.push(name, value);
  }
  out.push("x-forwarded-for", forwarded.forwardedFor(options.clientAddress), "x-forwarded-proto", forwarded.forwardedProto());
  const forwardedHost = forwarded.forwardedHost(request.authority);
  if (forwardedHost !== undefined) out.push("x-forwarded-host", forwardedHost);
  return out;
}

/** An h2 request as an HTTP/1.1 head: the text and how its body is framed. */
export interface Http1Head {
  readonly text: string;
  readonly framing: RequestBodyFraming;
}

/**
 * HTTP/1.1 to the app (RFC 9113 §8.2.3, §8.3.1): `:authority` becomes Host, cookie crumbs are
 * joined with `; `, `te` and hop-by-hop fields are dropped, and the body is framed by its
 * content-length (nghttp2 checks that the DATA frames add up to it) or chunked.
 */
export function http1RequestHead(request: H2Request, options: H2ForwardOptions): Http1Head {
  let text = `${request.method} ${options.target} HTTP/1.1\r\nhost: ${request.authority ?? options.upstreamHost}\r\n`;
  const forwarded = new ForwardedFields();
  let cookie: string | undefined;
  let contentLength: string | undefined;
  const raw = request.rawHeaders;
  for (let index = 0; index < raw.length; index += 2) {
    const name = raw[index]!;
    const value = raw[index + 1]!;
    if (name.charCodeAt(0) === 0x3a || name === "host") continue;
    if (forwarded.collect(name, value)) continue;
    if (name === "cookie") {
      cookie = cookie === undefined ? value : `${cookie}; ${value}`;
      continue;
    }
    if (name === "content-length") {
      contentLength = value;
      continue;
    }
    if (isHopByHop(name, NO_LISTED_NAMES)) continue;
    text += `${name}: ${value}\r\n`;
  }
  if (cookie !== undefined) text += `cookie: ${cookie}\r\n`;
  text += `x-forwarded-for: ${forwarded.forwardedFor(options.clientAddress)}\r\nx-forwarded-proto: ${forwarded.forwardedProto()}\r\n`;
  const forwardedHost = forwarded.forwardedHost(request.authority);
  if (forwardedHost !== undefined) text += `x-forwarded-host: ${forwardedHost}\r\n`;
  let framing: RequestBodyFraming = "none";
  if (contentLength !== undefined) {
    text += `content-length: ${contentLength}\r\n`;
    if (contentLength !== "0") framing = "length";
  } else if (!request.bodiless) {
    text += "transfer-encoding: chunked\r\n";
    framing = "chunked";
  }
  return { text: `${text}\r\n`, framing };
}

/**
 * An HTTP/1.1 request as h2c header fields (`--upstream-protocol h2c`), the codec's flat list:
 * Host becomes `:authority`, names are lower-cased, hop-by-hop fields (and those its Connection
 * lists) and the framing fields are dropped, X-Forwarded-* appended. `authority`: an
 * absolute-form target's, else Host's.
 */
export function h1ToH2cFields(request: RequestHead, target: string, authority: string | undefined, options: Omit<H2ForwardOptions, "target">): string[] {
  const out = [":method", request.method, ":path", target, ":scheme", "http", ":authority", authority ?? options.upstreamHost];
  const connection = request.joined("connection");
  const listed = connection === undefined ? NO_LISTED_NAMES : connectionListedNames([connection]);
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
  out.push("x-forwarded-for", forwarded.forwardedFor(options.clientAddress), "x-forwarded-proto", forwarded.forwardedProto());
  const forwardedHost = forwarded.forwardedHost(request.header("host") ?? authority);
  if (forwardedHost !== undefined) out.push("x-forwarded-host", forwardedHost);
  return out;
}
