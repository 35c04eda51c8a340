// The HTTP/1.1 head an h2 request is sent to an HTTP/1.1 app with (RFC 9113 §8.2.3, §8.3.1), built in one pass over its fields.
import { ForwardedFields } from "../forwarded-fields.js";
import { NO_LISTED_NAMES, isHopByHop } from "../hop-by-hop.js";
import type { ForwardedHead, RequestBodyFraming } from "../http1/forwarded-request-head.js";
import { headOctets } from "../http1/head-octets.js";
import type { H2ForwardOptions } from "../http2/h2-forward-headers.js";
import type { H2Request } from "../http2/h2-request.js";

/**
 * HTTP/1.1 to the app (RFC 9113 §8.2.3, §8.3.1): `:authority` becomes Host, cookie crumbs are
 * joined with `; `, `te` and hop-by-hop fields are dropped, and the body is framed by its
 * content-length (nghttp2 checks that the DATA frames add up to it) or chunked.
 */
export function http1RequestHead(request: H2Request, options: H2ForwardOptions): ForwardedHead {
  const out = headOctets;
  out.beginRequest(request.method, options.target);
  out.put("host: ");
  out.put(request.authority ?? options.upstreamHost);
  out.put("\r\n");
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
    out.put(name);
    out.put(": ");
    out.put(value);
    out.put("\r\n");
  }
  if (cookie !== undefined) {
    out.put("cookie: ");
    out.put(cookie);
    out.put("\r\n");
  }
  forwarded.writeLines(out, options.clientAddress, request.authority);
  let framing: RequestBodyFraming = "none";
  if (contentLength !== undefined) {
    out.put("content-length: ");
    out.put(contentLength);
    out.put("\r\n");
    if (contentLength !== "0") framing = "length";
  } else if (!request.bodiless) {
    out.put("transfer-encoding: chunked\r\n");
    framing = "chunked";
  }
  out.put("\r\n");
  return { octets: out.finish(), framing };
}
