// One HTTP/1.1 request relayed to an h2c app on a stream of the h2c pool (--upstream-protocol h2c): the client's side in http1/http1-client-exchange.ts, the app's in http2/h2c-app-side.ts; here the request becomes h2c fields and the app's heads HTTP/1.1 ones.
import { headerObject } from "../http2/app-stream.js";
import { H2cAppSide, type H2cAppUser } from "../http2/h2c-app-side.js";
import { fieldValue } from "../../h2-codec/field-list.js";
import { parseAbsoluteTarget } from "../../http/request-target.js";
import { responseFramingFor } from "../http1/body-framing.js";
import { expectsContinue } from "../http1/interim-responses.js";
import type { ClientConnection } from "../http1/client-connection.js";
import { Http1ClientExchange } from "../http1/http1-client-exchange.js";
import { clientAddressOf } from "../client-address.js";
import { framingRefusal, hostRefusal } from "../http1/forward-plan.js";
import type { RelayContext } from "../relay-context.js";
import type { RequestHead } from "../http1/request-head.js";
import { relayedResponseHead } from "../http1/response-head.js";
import { h1ToH2cFields } from "./h1-to-h2c-fields.js";
import type { H2cPool } from "../http2/h2c-pool.js";

export class H1ToH2cExchange extends Http1ClientExchange implements H2cAppUser {
  protected readonly app: H2cAppSide;
  /** The app's request head, the codec's flat list. */
  #fields: string[] | undefined;

  constructor(context: RelayContext, pool: H2cPool, client: ClientConnection, request: RequestHead) {
    super(context, client, request);
    this.app = new H2cAppSide(context, pool, request, this.record, this);
  }

  start(): void {
    const request = this.request;
    // As planForward: a framing that cannot be passed on is refused first, whatever the target.
    const framing = framingRefusal(request);
    if (framing !== undefined) return this.failBeforeHead(framing.status, new Error(framing.detail), framing.reason);
    const host = hostRefusal(request);
    if (host !== undefined) return this.failBeforeHead(host.status, new Error(host.detail), host.reason);
    const url = request.url;
    let target: string;
    let hostOverride: string | undefined;
    if (url.charCodeAt(0) === 0x2f /* "/" */) target = this.context.pathPrefix + url;
    else {
      const absolute = parseAbsoluteTarget(url);
      if (absolute === undefined) {
        if (url === "*" && request.method === "OPTIONS") return this.send(200, ["content-length", "0"], Buffer.alloc(0));
        return this.failBeforeHead(400, new Error("bad request target"), "bad request target");
      }
      target = this.context.pathPrefix + absolute.path;
      hostOverride = absolute.authority;
    }
    this.#fields = h1ToH2cFields(request, target, hostOverride, { clientAddress: clientAddressOf(this.client.remoteAddress), upstreamHost: this.context.upstreamHost });
    this.expectsContinue = expectsContinue(request);
    this.admit();
  }

  appHead(): string[] {
    return this.#fields!;
  }

  /**
   * An interim answer (103 Early Hints, say) goes to an HTTP/1.1 client as it comes, held back by
   * its socket like body bytes (an HTTP/1.0 one cannot read it; a 100 was ours to send, on the
   * request's Expect).
   */
  interim(fields: readonly string[]): boolean {
    const status = Number(fields[1]);
    if (status === 100 || this.request.versionMinor < 1) return true;
    return this.client.write(relayedResponseHead(status, "", http1Fields(fields), { hasContentLength: true, hasDate: true }, "none", true));
  }

  /** The app's head (the codec's flat list) as HTTP/1.1 (http1Fields), framed for this client. */
  head(fields: readonly string[], ended: boolean): void {
    const status = Number(fields[1]);
    const flat = http1Fields(fields);
    const hasContentLength = fieldValue(fields, "content-length") !== undefined;
    // An h2 answer that ended with its HEADERS (`ended`) has an empty body: said as a length of 0.
    this.responseFraming = responseFramingFor(this.request.method, status, hasContentLength || ended, this.request.versionMinor);
    if (this.responseFraming === "length" && !hasContentLength) flat.push("content-length", "0");
    else if (this.responseFraming === "close") this.client.closeAfterAnswer();
    this.client.write(relayedResponseHead(status, "", flat, { hasContentLength: true, hasDate: fieldValue(fields, "date") !== undefined }, this.responseFraming, this.client.keepAlive));
  }

  /** An HTTP/1.1 client is not sent the app's trailers (nor is one of an HTTP/1.1 app). */
  trailers(): void {}
}

/**
 * An h2c app's head, interim or final (the codec's flat list), as HTTP/1.1 fields: pseudo-headers
 * dropped, repeats joined as node joins them, the first of a single-value field kept.
 */
function http1Fields(fields: readonly string[]): string[] {
  const headers = headerObject(fields);
  const flat: string[] = [];
  for (const name of Object.keys(headers)) {
    if (name.charCodeAt(0) === 0x3a) continue;
    const value = headers[name];
    if (Array.isArray(value)) for (const one of value) flat.push(name, one);
    else if (value !== undefined) flat.push(name, String(value));
  }
  return flat;
}
