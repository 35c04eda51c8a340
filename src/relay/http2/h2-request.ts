// One HTTP/2 request as the relay reads it: its pseudo-headers and fields (what health answers, error pages and the record read), and a writer for a whole answer of our own.
import type { ResponseWriter } from "../../http/response-writer.js";
import type { ClientRequest } from "../forward-plan.js";
import type { ClientStream } from "./client-stream.js";
import { SINGLE_VALUE } from "./h2-response-headers.js";

/** `application/grpc`, `application/grpc+proto`, `application/grpc-web...`: a gRPC call. */
const GRPC_CONTENT_TYPE = /^application\/grpc(?:[+;-]|$)/i;

/** A request on an h2 stream; the codec has already checked it (RFC 9113 §8). */
export class H2Request implements ClientRequest {
  readonly method: string;
  /** `:path` (path and query), as sent; empty for CONNECT. */
  readonly url: string;
  /** `:authority`, else the Host field, else undefined. */
  readonly authority: string | undefined;
  /** Flat `[name, value, ...]` as received, pseudo-headers included. */
  readonly headers: readonly string[];
  /** The client sent END_STREAM with its HEADERS: no body follows. */
  readonly bodiless: boolean;
  /** `content-type: application/grpc*`: proxy-made answers take the gRPC form (CONTRACT §13). */
  readonly grpc: boolean;

  constructor(headers: readonly string[], endStream: boolean) {
    this.headers = headers;
    let method = "";
    let path = "";
    let authority: string | undefined;
    let host: string | undefined;
    let contentType: string | undefined;
    for (let index = 0; index < headers.length; index += 2) {
      const name = headers[index]!;
      const value = headers[index + 1]!;
      if (name === ":method") method = value;
      else if (name === ":path") path = value;
      else if (name === ":authority") authority = value;
      else if (name === "host") host ??= value;
      else if (name === "content-type") contentType ??= value;
    }
    this.method = method;
    this.url = path;
    this.authority = authority ?? host;
    this.bodiless = endStream;
    this.grpc = contentType !== undefined && GRPC_CONTENT_TYPE.test(contentType);
  }

  get protocol(): "HTTP/2" {
    return "HTTP/2";
  }

  /** An h2 request carries no Upgrade (RFC 9113 §8.6). */
  get upgrade(): boolean {
    return false;
  }

  /** DATA frames the body: without END_STREAM and a content-length, an HTTP/1.1 app needs it chunked. */
  get unframedBody(): boolean {
    return !this.bodiless;
  }

  /** The field's value; repeats joined as node:http2 joins them (`; ` for cookie, `, ` otherwise, the first of a single-value field). */
  header(lowerName: string): string | undefined {
    let value: string | undefined;
    const raw = this.headers;
    const single = SINGLE_VALUE.has(lowerName);
    for (let index = 0; index < raw.length; index += 2) {
      if (raw[index] !== lowerName) continue;
      const one = raw[index + 1]!;
      if (value === undefined) value = one;
      else if (single) break;
      else value = `${value}${lowerName === "cookie" ? "; " : ", "}${one}`;
    }
    return value;
  }

  /** Every value of the field joined with ", ", a single-value field's too (RequestView's rule, the same as HTTP/1.1's). */
  joined(lowerName: string): string | undefined {
    let value: string | undefined;
    const raw = this.headers;
    for (let index = 0; index < raw.length; index += 2) {
      if (raw[index] === lowerName) value = value === undefined ? raw[index + 1]! : `${value}, ${raw[index + 1]!}`;
    }
    return value;
  }
}

/** Our own answer's head (a flat `[name, value, ...]` list, as the HTTP/1.1 side writes it) as the codec's: `:status` first, names lower-case. */
export function responseFields(status: number, headers: readonly string[]): string[] {
  const fields = [":status", String(status)];
  for (let index = 0; index < headers.length; index += 2) fields.push(headers[index]!.toLowerCase(), headers[index + 1]!);
  return fields;
}

/** The writer for one stream's whole answer (health paths, proxy-made errors); HEAD gets no body. */
export function streamWriter(stream: ClientStream, request: H2Request, onSent?: (status: number, bodyBytes: number) => void): ResponseWriter {
  return {
    send(status, headers, body) {
      if (stream.closed || stream.headersSent) return;
      const withBody = request.method !== "HEAD" && body.length > 0;
      stream.respond(responseFields(status, headers), !withBody);
      if (withBody) stream.end(body);
      onSent?.(status, withBody ? body.length : 0);
    },
  };
}
