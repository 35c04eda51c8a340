// The forwarding policy, applied once per request whichever protocols are on either side: refused (400, 501), answered by the proxy (OPTIONS *), or forwarded with its target, authority and Connection-listed names decided here for the app side to encode.
import { authorityIsValid } from "../http/authority.js";
import { parseAbsoluteTarget } from "../http/request-target.js";
import type { RequestView } from "../http/response-writer.js";
import { NO_LISTED_NAMES, connectionListedNames } from "./hop-by-hop.js";
import type { RelayContext } from "./relay-context.js";

/**
 * A client's request head as its side decoded it, the one shape both app sides encode from:
 * the flat field list with names as sent (an HTTP/1.1 client's case kept; an h2 client's
 * lower-case, pseudo-headers included, which every encoder skips), plus the facts the policy and
 * the encoders need. Implemented by http1/request-head.ts and http2/h2-request.ts.
 */
export interface ClientRequest extends RequestView {
  /** Flat `[name, value, ...]`, names as sent. */
  readonly headers: readonly string[];
  /** Host (HTTP/1.1) or `:authority` (else Host) (h2), as sent; undefined when there is none. */
  readonly authority: string | undefined;
  readonly protocol: "HTTP/1.1" | "HTTP/2";
  /** An HTTP/1.1 Upgrade (or CONNECT): after its head, the connection may become a tunnel. Never for h2. */
  readonly upgrade: boolean;
  /** A body may follow that no Content-Length frames and that needs chunking for an HTTP/1.1 app (an h2 stream without END_STREAM). */
  readonly unframedBody: boolean;
}

/** Why a request cannot be forwarded: the status, the fixed reason the client sees, and the detail the log gets. */
export interface Refusal {
  readonly kind: "refuse";
  readonly status: 400 | 501;
  readonly reason: string;
  readonly detail: string;
}

/** What the app side encodes the request with (the one target resolution's result, the authority rule applied). */
export interface Forwarding {
  readonly kind: "forward";
  /** The target as the app gets it: the path prefix applied, absolute-form reduced to its path. */
  readonly target: string;
  /** Sent as Host or `:authority`; undefined: the upstream's own (none sent, or Connection listed Host). */
  readonly authority: string | undefined;
  /** What the request named (an absolute-form target's authority, else the client's Host or :authority), appended to X-Forwarded-Host. */
  readonly forwardedHost: string | undefined;
  /** The names the client's Connection lists: hop-by-hop too. */
  readonly listed: ReadonlySet<string>;
  /** A WebSocket handshake keeps its Upgrade; any other upgrade goes as plain HTTP/1.1 with `Connection: close`. */
  readonly upgrade: "websocket" | "other" | undefined;
}

export type ForwardPlan = Forwarding | { readonly kind: "server options" } | Refusal;

const SERVER_OPTIONS: ForwardPlan = { kind: "server options" };

/**
 * The plan for one request, whatever its client spoke: CONNECT refused, a framing that cannot be
 * passed on refused, the authority rule, the one target resolution (path prefix, absolute-form,
 * `OPTIONS *`), the upgrade judged, the Connection-listed names read.
 */
export function planForward(request: ClientRequest, context: RelayContext): ForwardPlan {
  // Not a reverse proxy's to serve, over either protocol (over HTTP/1.1, llhttp would hand what follows its head to a tunnel).
  if (request.method === "CONNECT") return refuse(501, "CONNECT is not supported", "CONNECT is not a reverse proxy's to serve");
  // An h2 client's head needs none of what follows until the target: its codec refused
  // Transfer-Encoding and Connection (connection-specific, RFC 9113 §8.2.2), and its listener
  // applied the authority rule (a stream error there, where HTTP/1.1 gets the 400 below).
  const http1 = request.protocol === "HTTP/1.1";
  const clientHost = request.authority;
  if (http1) {
    // Then, whatever the target: a body whose framing cannot be passed on must not be read as
    // what follows it, so its 501 (and the close) comes before `OPTIONS *` is ours to answer.
    const framing = framingRefusal(request);
    if (framing !== undefined) return framing;
    const host = hostRefusal(clientHost);
    if (host !== undefined) return host;
  }
  const url = request.url;
  let target: string;
  let hostOverride: string | undefined;
  if (url.charCodeAt(0) === 0x2f /* "/" */) {
    target = context.pathPrefix + url;
  } else {
    // RFC 9112 §3.2.2: a server must accept absolute-form; like nginx, its authority replaces Host.
    // (An h2 `:path` is origin-form or `*`: the codec refused anything else of an http one.)
    const absolute = http1 ? parseAbsoluteTarget(url) : undefined;
    if (absolute === undefined) {
      // `OPTIONS *` asks about the server, which is ours to answer.
      if (url === "*" && request.method === "OPTIONS") return SERVER_OPTIONS;
      return refuse(400, "bad request target", "request target is neither a path nor absolute-form");
    }
    target = context.pathPrefix + absolute.path;
    hostOverride = absolute.authority;
  }
  let upgrade: "websocket" | "other" | undefined;
  if (request.upgrade) upgrade = (request.header("upgrade") ?? "").toLowerCase() === "websocket" ? "websocket" : "other";
  const connection = http1 ? request.joined("connection") : undefined;
  const listed = connection === undefined ? NO_LISTED_NAMES : connectionListedNames(connection);
  // A Host the client's Connection lists is hop-by-hop too: the upstream's goes instead; X-Forwarded-Host still names it.
  const authority = hostOverride ?? (listed.has("host") ? undefined : clientHost);
  return { kind: "forward", target, authority, forwardedHost: hostOverride ?? clientHost, listed, upgrade };
}

/** The refusal of a Transfer-Encoding the relay cannot pass on (RFC 9112 §6.1: 501), or of an empty one (400); undefined when it can. */
export function framingRefusal(request: RequestView): Refusal | undefined {
  if (relaysTransferCoding(request)) return undefined;
  const transferEncoding = request.header("transfer-encoding")!;
  return transferEncoding.trim() === ""
    ? refuse(400, "bad request framing", "an empty Transfer-Encoding")
    : refuse(501, "transfer coding not supported", `Transfer-Encoding ${JSON.stringify(transferEncoding)}`);
}

/**
 * The refusal of an authority that fails the one rule (src/http/authority.ts), whatever becomes
 * of it: it goes on as Host or `:authority`, or as X-Forwarded-Host when Connection lists it or
 * an absolute-form target replaces it. An h2 client's is not judged here: its listener refused
 * the stream already (a stream error). undefined when it passes, or when there is none (an HTTP/1.0
 * request; the listener has refused an HTTP/1.1 one without Host, or with two).
 */
export function hostRefusal(host: string | undefined): Refusal | undefined {
  if (host === undefined || authorityIsValid(host)) return undefined;
  return refuse(400, "invalid host", `Host ${JSON.stringify(host)}`);
}

/**
 * llhttp accepts any codings before a final chunked; we re-chunk and drop the header, so an app
 * would take gzip-coded bytes for the body. Only none or plain chunked is relayed (RFC 9112 §6.1: 501).
 */
export function relaysTransferCoding(request: RequestView): boolean {
  const transferEncoding = request.header("transfer-encoding");
  return transferEncoding === undefined || transferEncoding.trim().toLowerCase() === "chunked";
}

function refuse(status: 400 | 501, reason: string, detail: string): Refusal {
  return { kind: "refuse", status, reason, detail };
}
