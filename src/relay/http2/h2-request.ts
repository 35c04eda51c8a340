// One HTTP/2 request as the relay reads it: its pseudo-headers and fields (what health answers, error pages and the record read), and a writer for a whole answer of our own.
import type { IncomingHttpHeaders, OutgoingHttpHeaders, ServerHttp2Stream } from "node:http2";
import type { RequestView, ResponseWriter } from "../../http/response-writer.js";

/** `application/grpc`, `application/grpc+proto`, `application/grpc-web...`: a gRPC call. */
const GRPC_CONTENT_TYPE = /^application\/grpc(?:[+;-]|$)/i;

/** A request on an h2 stream; nghttp2 has already validated its pseudo-headers and field names. */
export class H2Request implements RequestView {
  readonly method: string;
  /** `:path` (path and query), as sent; empty for CONNECT. */
  readonly url: string;
  /** `:authority`, else the Host field, else undefined. */
  readonly authority: string | undefined;
  readonly headers: IncomingHttpHeaders;
  /** Flat `[name, value, ...]` as received, pseudo-headers included (node's rawHeaders). */
  readonly rawHeaders: readonly string[];
  /** The client sent END_STREAM with its HEADERS: no body follows. */
  readonly bodiless: boolean;
  /** `content-type: application/grpc*`: proxy-made answers take the gRPC form (CONTRACT §13). */
  readonly grpc: boolean;

  constructor(headers: IncomingHttpHeaders, rawHeaders: readonly string[], endStream: boolean) {
    this.headers = headers;
    this.rawHeaders = rawHeaders;
    this.method = String(headers[":method"] ?? "");
    this.url = String(headers[":path"] ?? "");
    const authority = headers[":authority"] ?? headers.host;
    this.authority = authority === undefined ? undefined : String(authority);
    this.bodiless = endStream;
    const contentType = headers["content-type"];
    this.grpc = typeof contentType === "string" && GRPC_CONTENT_TYPE.test(contentType);
  }

  header(lowerName: string): string | undefined {
    const value = this.headers[lowerName];
    return Array.isArray(value) ? value[0] : value;
  }
}

/** A flat `[name, value, ...]` list (our own answers' form) as node:http2's header object, `:status` first. */
export function responseHeaderObject(status: number, headers: readonly string[]): OutgoingHttpHeaders {
  const object: OutgoingHttpHeaders = { ":status": status };
  for (let index = 0; index < headers.length; index += 2) object[headers[index]!.toLowerCase()] = headers[index + 1]!;
  return object;
}

/** The writer for one stream's whole answer (health paths, proxy-made errors); HEAD gets no body. */
export function streamWriter(stream: ServerHttp2Stream, request: H2Request, onSent?: (status: number, bodyBytes: number) => void): ResponseWriter {
  return {
    send(status, headers, body) {
      if (stream.destroyed || stream.headersSent) return;
      const withBody = request.method !== "HEAD" && body.length > 0;
      stream.respond(responseHeaderObject(status, headers), { endStream: !withBody });
      if (withBody) stream.end(body);
      onSent?.(status, withBody ? body.length : 0);
    },
  };
}
