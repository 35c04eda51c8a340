// Decides what becomes of a request before anything is sent: forwarded (with its head built once), answered by the proxy, or refused with a 400 or 501.
import { authorityIsValid } from "../../http/authority.js";
import { parseAbsoluteTarget } from "../../http/request-target.js";
import { clientAddressOf } from "../client-address.js";
import { forwardedRequestHead, type ForwardedHead } from "./forwarded-request-head.js";
import type { RelayContext } from "../relay-context.js";
import type { RequestHead } from "./request-head.js";
import { expectsContinue } from "./interim-responses.js";

/** Why a request cannot be forwarded: the status, the fixed reason the client sees, and the detail the log gets. */
export interface Refusal {
  readonly kind: "refuse";
  readonly status: 400 | 501;
  readonly reason: string;
  readonly detail: string;
}

export type ForwardPlan =
  | { readonly kind: "forward"; readonly head: ForwardedHead; readonly upgrade: "websocket" | "other" | undefined; readonly expectsContinue: boolean }
  | { readonly kind: "server options" }
  | Refusal;

const SERVER_OPTIONS: ForwardPlan = { kind: "server options" };

/** The plan for one request: its target resolved, its upgrade and expectation judged, its upstream head built. */
export function planForward(request: RequestHead, context: RelayContext, remoteAddress: string | undefined): ForwardPlan {
  // A CONNECT is no request to frame a body for: llhttp hands what follows its head to a tunnel.
  if (request.upgrade && request.method === "CONNECT") return refuse(400, "CONNECT is not supported", "CONNECT is not a reverse proxy's to serve");
  // Then, whatever the target: a body whose framing cannot be passed on must not be read as
  // what follows it, so its 501 (and the close) comes before `OPTIONS *` is ours to answer.
  const framing = framingRefusal(request);
  if (framing !== undefined) return framing;
  const host = hostRefusal(request);
  if (host !== undefined) return host;
  const url = request.url;
  let target: string;
  let hostOverride: string | undefined;
  if (url.charCodeAt(0) === 0x2f /* "/" */) {
    target = context.pathPrefix + url;
  } else {
    // RFC 9112 §3.2.2: a server must accept absolute-form; like nginx, its authority replaces Host.
    const absolute = parseAbsoluteTarget(url);
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
  const head = forwardedRequestHead(request, {
    target,
    hostOverride,
    clientAddress: clientAddressOf(remoteAddress),
    upstreamHost: context.upstreamHost,
    upgrade,
  });
  return { kind: "forward", head, upgrade, expectsContinue: expectsContinue(request) };
}

/** The refusal of a Transfer-Encoding the relay cannot pass on (RFC 9112 §6.1: 501), or of an empty one (400); undefined when it can. */
export function framingRefusal(request: RequestHead): Refusal | undefined {
  if (relaysTransferCoding(request)) return undefined;
  const transferEncoding = request.header("transfer-encoding")!;
  return transferEncoding.trim() === ""
    ? refuse(400, "bad request framing", "an empty Transfer-Encoding")
    : refuse(501, "transfer coding not supported", `Transfer-Encoding ${JSON.stringify(transferEncoding)}`);
}

/**
 * The refusal of a Host that fails the one authority rule (src/http/authority.ts, which our h2
 * listener applies to `:authority`), whatever becomes of it: it goes on as Host or `:authority`,
 * or as X-Forwarded-Host when Connection lists it or an absolute-form target replaces it.
 * undefined when it passes, or when there is none (an HTTP/1.0 request; the listener has refused
 * an HTTP/1.1 one without Host, or with two).
 */
export function hostRefusal(request: RequestHead): Refusal | undefined {
  const host = request.header("host");
  if (host === undefined || authorityIsValid(host)) return undefined;
  return refuse(400, "invalid host", `Host ${JSON.stringify(host)}`);
}

/**
 * llhttp accepts any codings before a final chunked; we re-chunk and drop the header, so an app
 * would take gzip-coded bytes for the body. Only none or plain chunked is relayed (RFC 9112 §6.1: 501).
 */
export function relaysTransferCoding(request: RequestHead): boolean {
  const transferEncoding = request.header("transfer-encoding");
  return transferEncoding === undefined || transferEncoding.trim().toLowerCase() === "chunked";
}

function refuse(status: 400 | 501, reason: string, detail: string): Refusal {
  return { kind: "refuse", status, reason, detail };
}
