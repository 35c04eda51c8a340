// One stream to an h2c app, as the exchanges use it: the codec's client side (stream-port.ts) with the app's heads and trailers as node-style header objects.
import type { IncomingHttpHeaders } from "node:http2";
import { StreamPort } from "./stream-port.js";
import { SINGLE_VALUE } from "./h2-response-headers.js";

function ignore(): void {}

/** A request's stream at the app: `onResponse` for the final head, `onInterim` for a 1xx, `onTrailers` for the app's trailers. */
export class AppStream extends StreamPort {
  onResponse: (headers: IncomingHttpHeaders, endStream: boolean) => void = ignore;
  onInterim: (headers: IncomingHttpHeaders) => void = ignore;
  onTrailers: (headers: IncomingHttpHeaders) => void = ignore;

  /** A response head from the app (checked by the codec: `:status` first). */
  receivedHead(fields: readonly string[], endStream: boolean): void {
    if (this.closed) return;
    const headers = headerObject(fields);
    const status = Number(fields[1]);
    if (status < 200) return this.onInterim(headers);
    this.onResponse(headers, endStream);
    // As node tells it: a head with END_STREAM is the end of the answer too.
    if (endStream && !this.closed) this.onEnd();
  }

  protected override deliverTrailers(fields: readonly string[]): void {
    this.onTrailers(headerObject(fields));
  }
}

/** The codec's flat list as node:http2's header object: `:status` a number, repeats joined as node joins them. */
export function headerObject(fields: readonly string[]): IncomingHttpHeaders {
  const headers: IncomingHttpHeaders = {};
  for (let index = 0; index < fields.length; index += 2) {
    const name = fields[index]!;
    const value = fields[index + 1]!;
    const existing = headers[name];
    if (existing === undefined) {
      if (name === "set-cookie") headers[name] = [value];
      else (headers as Record<string, unknown>)[name] = name === ":status" ? Number(value) : value;
    } else if (!SINGLE_VALUE.has(name)) {
      if (name === "set-cookie") (existing as string[]).push(value);
      else headers[name] = `${existing as string}${name === "cookie" ? "; " : ", "}${value}`;
    }
  }
  return headers;
}
