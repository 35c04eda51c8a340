// X-Forwarded-For, -Proto and -Host as the relay sends them, whichever protocols are on either side: the client's own values kept in order, ours appended (CONTRACT §5).
import { isNamed } from "./header-name.js";

/** Where HTTP/1.1 header lines are written, piece by piece (src/relay/http1/head-octets.ts). */
export interface HeadSink {
  put(text: string): void;
}

/** The proxy is cleartext only: the scheme it appends to X-Forwarded-Proto. */
const OUR_PROTO = "http";

/** A list field's next value: repeats join into one list, in order (RFC 9110 §5.3). */
function joined(list: string | undefined, value: string): string {
  return list === undefined ? value : `${list}, ${value}`;
}

/** `joined(list, value)` written without the joined string. */
function putJoined(out: HeadSink, list: string | undefined, value: string): void {
  if (list !== undefined) {
    out.put(list);
    out.put(", ");
  }
  out.put(value);
}

/** The client's X-Forwarded-* fields of one request, each joined into one list as it comes. */
export class ForwardedFields {
  for: string | undefined = undefined;
  proto: string | undefined = undefined;
  host: string | undefined = undefined;

  /**
   * Takes the field if it is one of the three (`name` in any case); true when it was. By
   * length first, so that any other field costs one comparison at most: this runs for every
   * field of every request.
   */
  collect(name: string, value: string): boolean {
    switch (name.length) {
      case 15:
        if (!isNamed(name, "x-forwarded-for")) return false;
        this.for = joined(this.for, value);
        return true;
      case 16:
        if (!isNamed(name, "x-forwarded-host")) return false;
        this.host = joined(this.host, value);
        return true;
      case 17:
        if (!isNamed(name, "x-forwarded-proto")) return false;
        this.proto = joined(this.proto, value);
        return true;
      default:
        return false;
    }
  }

  /**
   * The three fields to send, as HTTP/1.1 header lines: the client's lists with the client's
   * address, our scheme and the host the request named appended (X-Forwarded-Host left out when
   * neither the client nor the request had one).
   */
  writeLines(out: HeadSink, clientAddress: string, requestHost: string | undefined): void {
    out.put("x-forwarded-for: ");
    putJoined(out, this.for, clientAddress);
    out.put("\r\nx-forwarded-proto: ");
    putJoined(out, this.proto, OUR_PROTO);
    out.put("\r\n");
    if (requestHost === undefined && this.host === undefined) return;
    out.put("x-forwarded-host: ");
    if (requestHost === undefined) out.put(this.host!);
    else putJoined(out, this.host, requestHost);
    out.put("\r\n");
  }

  /** The same three fields appended to a flat `[name, value, ...]` list (the h2 codec's). */
  appendFields(out: string[], clientAddress: string, requestHost: string | undefined): void {
    out.push("x-forwarded-for", joined(this.for, clientAddress), "x-forwarded-proto", joined(this.proto, OUR_PROTO));
    const host = this.#host(requestHost);
    if (host !== undefined) out.push("x-forwarded-host", host);
  }

  #host(requestHost: string | undefined): string | undefined {
    return requestHost === undefined ? this.host : joined(this.host, requestHost);
  }
}
