// X-Forwarded-For, -Proto and -Host as the relay sends them, whichever protocols are on either side: the client's own values kept in order, ours appended (CONTRACT §5).

/** The proxy is cleartext only: the scheme it appends to X-Forwarded-Proto. */
const OUR_PROTO = "http";

/** A list field's next value: repeats join into one list, in order (RFC 9110 §5.3). */
function joined(list: string | undefined, value: string): string {
  return list === undefined ? value : `${list}, ${value}`;
}

/** The client's X-Forwarded-* fields of one request, each joined into one list as it comes. */
export class ForwardedFields {
  for: string | undefined = undefined;
  proto: string | undefined = undefined;
  host: string | undefined = undefined;

  /**
   * Takes the field if it is one of the three (`lowerName` in lower case); true when it was. By
   * length first, so that any other field costs one comparison at most: this runs for every
   * field of every request.
   */
  collect(lowerName: string, value: string): boolean {
    switch (lowerName.length) {
      case 15:
        if (lowerName !== "x-forwarded-for") return false;
        this.for = joined(this.for, value);
        return true;
      case 16:
        if (lowerName !== "x-forwarded-host") return false;
        this.host = joined(this.host, value);
        return true;
      case 17:
        if (lowerName !== "x-forwarded-proto") return false;
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
  headerLines(clientAddress: string, requestHost: string | undefined): string {
    const host = this.#host(requestHost);
    const lines = `x-forwarded-for: ${joined(this.for, clientAddress)}\r\nx-forwarded-proto: ${joined(this.proto, OUR_PROTO)}\r\n`;
    return host === undefined ? lines : `${lines}x-forwarded-host: ${host}\r\n`;
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
