// A strict reader of the HTTP/1.1 requests on one upstream connection (RFC 9112 grammar, nothing lenient): what the h2 fuzz holds the proxy's downgraded requests to.

/** One request as the grammar reads it. */
export interface StrictRequest {
  readonly method: string;
  readonly target: string;
  /** Field lines in order: the name as sent, the value without its optional whitespace. */
  readonly fields: ReadonlyArray<readonly [string, string]>;
  readonly framing: "none" | "length" | "chunked";
  /** The body, decoded (so far, when incomplete). */
  readonly body: Buffer;
  /** The whole message arrived; false only for the last one, cut off by the connection's end. */
  readonly complete: boolean;
}

export interface StrictReading {
  readonly requests: StrictRequest[];
  /** What breaks the grammar, and where; undefined when every byte is part of a request. */
  readonly error: string | undefined;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** The request line: a method token, an origin-form target of visible ASCII, HTTP/1.1. */
const REQUEST_LINE = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+) (\/[\x21-\x7e]*) HTTP\/1\.1$/;
/** field-value (RFC 9110 §5.5): VCHAR, obs-text, SP and HTAB, not at either end. */
const FIELD_VALUE = /^(?:[\x21-\x7e\x80-\xff](?:[\t\x20-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?)?$/;
const HEX = /^[0-9A-Fa-f]+$/;

/** Reads `bytes` (latin1) as consecutive requests; stops at the first byte the grammar refuses. */
export function readStrictRequests(bytes: Buffer): StrictReading {
  const text = bytes.toString("latin1");
  const requests: StrictRequest[] = [];
  let at = 0;
  while (at < text.length) {
    const fail = (why: string): StrictReading => ({ requests, error: `${why} at byte ${at} of ${text.length}: ${JSON.stringify(text.slice(at, at + 120))}` });
    const headEnd = text.indexOf("\r\n\r\n", at);
    if (headEnd < 0) {
      // Cut off in its head: only a prefix of a well-formed head may be pending.
      const pending = text.slice(at);
      if (/[\r\n]/.test(pending.replace(/\r\n/g, "").replace(/\r$/, "")) || /\r\n[ \t]/.test(pending)) return fail("a broken head");
      requests.push({ method: "", target: "", fields: [], framing: "none", body: Buffer.alloc(0), complete: false });
      return { requests, error: undefined };
    }
    const lines = text.slice(at, headEnd).split("\r\n");
    const line = REQUEST_LINE.exec(lines[0]!);
    if (!line) return fail("not a request line");
    const fields: Array<[string, string]> = [];
    for (const fieldLine of lines.slice(1)) {
      const colon = fieldLine.indexOf(":");
      const name = colon < 0 ? "" : fieldLine.slice(0, colon);
      const value = fieldLine.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, "");
      if (!TOKEN.test(name) || !FIELD_VALUE.test(value) || /[\r\n]/.test(fieldLine)) return fail(`not a field line (${JSON.stringify(fieldLine.slice(0, 60))})`);
      fields.push([name, value]);
    }
    const named = (wanted: string) => fields.filter(([name]) => name.toLowerCase() === wanted).map(([, value]) => value);
    // RFC 9112 §3.2: exactly one Host, a valid one.
    const hosts = named("host");
    if (hosts.length !== 1 || !/^[\x21-\x7e]*$/.test(hosts[0]!)) return fail(`Host ${JSON.stringify(hosts)}`);
    const lengths = named("content-length");
    const codings = named("transfer-encoding");
    if (lengths.length > 1 || (lengths.length === 1 && !/^\d+$/.test(lengths[0]!))) return fail(`Content-Length ${JSON.stringify(lengths)}`);
    if (codings.length > 1 || (codings.length === 1 && (codings[0] !== "chunked" || lengths.length > 0))) return fail(`Transfer-Encoding ${JSON.stringify(codings)} with Content-Length ${JSON.stringify(lengths)}`);
    at = headEnd + 4;
    const head = { method: line[1]!, target: line[2]!, fields };
    if (codings.length === 1) {
      const chunks: string[] = [];
      for (;;) {
        const sizeEnd = text.indexOf("\r\n", at);
        if (sizeEnd < 0) {
          if (!/^[0-9A-Fa-f]*\r?$/.test(text.slice(at))) return fail("a broken chunk size");
          return { requests: [...requests, { ...head, framing: "chunked", body: Buffer.from(chunks.join(""), "latin1"), complete: false }], error: undefined };
        }
        const sizeText = text.slice(at, sizeEnd);
        if (!HEX.test(sizeText)) return fail("a broken chunk size");
        const size = parseInt(sizeText, 16);
        at = sizeEnd + 2;
        if (size === 0) break;
        const data = text.slice(at, at + size);
        chunks.push(data);
        if (at + size + 2 > text.length) {
          if (!"\r\n".startsWith(text.slice(at + size))) return fail("a chunk without its CRLF");
          return { requests: [...requests, { ...head, framing: "chunked", body: Buffer.from(chunks.join(""), "latin1"), complete: false }], error: undefined };
        }
        if (text.slice(at + size, at + size + 2) !== "\r\n") return fail("a chunk without its CRLF");
        at += size + 2;
      }
      // No trailer fields are sent: the last chunk is followed by the empty line.
      if (text.length < at + 2) {
        if (!"\r\n".startsWith(text.slice(at))) return fail("a last chunk without its empty line");
        return { requests: [...requests, { ...head, framing: "chunked", body: Buffer.from(chunks.join(""), "latin1"), complete: false }], error: undefined };
      }
      if (text.slice(at, at + 2) !== "\r\n") return fail("trailer fields after the last chunk");
      at += 2;
      requests.push({ ...head, framing: "chunked", body: Buffer.from(chunks.join(""), "latin1"), complete: true });
    } else {
      const length = lengths.length === 1 ? Number(lengths[0]) : 0;
      const body = Buffer.from(text.slice(at, at + length), "latin1");
      const complete = at + length <= text.length;
      requests.push({ ...head, framing: lengths.length === 1 ? "length" : "none", body, complete });
      at += length;
    }
  }
  return { requests, error: undefined };
}
