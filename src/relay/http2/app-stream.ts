// One stream to an h2c app, as the exchanges use it: the codec's client side (stream-port.ts) with the app's heads and trailers as the codec's flat lists.
import type { IncomingHttpHeaders } from "node:http2";
import { NO_STREAM_USER, StreamPort, type StreamUser } from "./stream-port.js";
import type { H2Connection } from "../../h2-codec/h2-connection.js";
import type { H2Stream } from "../../h2-codec/h2-stream.js";
import { SINGLE_VALUE } from "./h2-response-headers.js";
import { H2_ERROR } from "../../h2-codec/codec-error.js";

/**
 * RFC 9113 §8.7: a stream the app closed with REFUSED_STREAM was not processed (the codec closes
 * every stream above a GOAWAY's last stream id with that code too), so it is sent again on another
 * stream: once, only before any answer, and only when all of the body it carried is still kept
 * (sent-body.ts). The one rule for every exchange whose app speaks h2c, whatever its client speaks.
 */
export function sendsAgain(rstCode: number | undefined, answered: boolean, sentAgainBefore: boolean, bodyLost: boolean): boolean {
  return rstCode === H2_ERROR.REFUSED_STREAM && !answered && !sentAgainBefore && !bodyLost;
}

/**
 * What a request's stream at the app tells its user besides the body: `streamResponse` for the
 * final head, `streamInterim` for a 1xx; each (and the trailers) a flat `[name, value, ...]`
 * list as the codec decoded and checked it (`:status` first in a head).
 */
export interface AppStreamUser extends StreamUser {
  streamResponse(fields: readonly string[], endStream: boolean): void;
  streamInterim(fields: readonly string[]): void;
}

const NO_APP_STREAM_USER: AppStreamUser = Object.freeze({ ...NO_STREAM_USER, streamResponse(): void {}, streamInterim(): void {} });

/** A request's stream at the app. */
export class AppStream extends StreamPort<AppStreamUser> {
  constructor(connection: H2Connection, stream: H2Stream, reportFault: (error: unknown) => void) {
    super(connection, stream, reportFault, NO_APP_STREAM_USER);
  }

  /** A response head from the app. */
  receivedHead(fields: readonly string[], endStream: boolean): void {
    if (this.closed) return;
    this.within(this.#deliverHead, fields, endStream);
  }

  #deliverHead(fields: readonly string[], endStream: boolean): void {
    if (Number(fields[1]) < 200) return this.user.streamInterim(fields);
    this.user.streamResponse(fields, endStream);
    // A head with END_STREAM is the end of the answer too.
    if (endStream && !this.closed) this.user.streamEnd();
  }
}

/** The codec's flat list as node's header object, for an HTTP/1.1 client's head: `:status` a number, repeats joined as node joins them. */
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
