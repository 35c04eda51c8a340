// The request head an h2c app is sent, whichever protocol the client spoke, built in one pass over the client's decoded head as the codec's flat list.
import { ForwardedFields } from "../forwarded-fields.js";
import type { ClientRequest, Forwarding } from "../forward-plan.js";
import { isHopByHop } from "../hop-by-hop.js";

/**
 * h2c to the app, as the codec's flat list: the plan's target and authority as pseudo-headers,
 * then the client's fields lower-cased, minus pseudo-headers, Host (`:authority` says it) and
 * hop-by-hop ones (and those the client's Connection lists), except `te: trailers` from an h2
 * client, which gRPC needs end to end (an HTTP/1.1 client is sent no trailers, so it is not
 * asked for); repeats kept in order; X-Forwarded-* appended. The codec has refused an h2 request
 * with connection-specific fields or another `te` already.
 */
export function upstreamH2Fields(request: ClientRequest, plan: Forwarding, clientAddress: string, upstreamHost: string): string[] {
  const out = [":method", request.method, ":path", plan.target, ":scheme", "http", ":authority", plan.authority ?? upstreamHost];
  const fromH2 = request.protocol === "HTTP/2";
  const listed = plan.listed;
  const forwarded = new ForwardedFields();
  const raw = request.headers;
  for (let index = 0; index < raw.length; index += 2) {
    // An h2 client's names are lower-case already (the codec's rule).
    const name = fromH2 ? raw[index]! : raw[index]!.toLowerCase();
    const value = raw[index + 1]!;
    if (name.charCodeAt(0) === 0x3a /* ":" */ || name === "host") continue;
    if (forwarded.collect(name, value)) continue;
    if (name === "te") {
      if (fromH2 && value.trim().toLowerCase() === "trailers") out.push("te", "trailers");
      continue;
    }
    if (isHopByHop(name, listed)) continue;
    out.push(name, value);
  }
  forwarded.appendFields(out, clientAddress, plan.forwardedHost);
  return out;
}
