// The request head an h2 request is sent to an h2c app with, built in one pass over its fields as the codec's flat list.
import { ForwardedFields } from "../forwarded-fields.js";
import { NO_LISTED_NAMES, isHopByHop } from "../hop-by-hop.js";
import type { H2Request } from "./h2-request.js";

/** What every translation of a request head needs besides the request: the target (path prefix applied), the peer, the upstream's authority. */
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
  forwarded.appendFields(out, options.clientAddress, request.authority);
  return out;
}
