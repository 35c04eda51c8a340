// One h2 stream relayed to an HTTP/1.1 app through the HTTP/1.1 pool (--upstream-protocol http1): the client's side in http2/h2-client-exchange.ts, the app's in http1/http1-app-side.ts; here the head is translated once each way.
import type { Socket } from "node:net";
import { clientAddressOf } from "../client-address.js";
import { Http1AppSide, type Http1AppUser, type Http1SendRules } from "../http1/http1-app-side.js";
import { BODY, type BodyDirective, type ParsedHead } from "../http1/llhttp-binding.js";
import type { RelayContext } from "../relay-context.js";
import type { UpstreamPool } from "../http1/upstream-pool.js";
import { http1RequestHead } from "./h2-to-h1-head.js";
import { H2ClientExchange } from "../http2/h2-client-exchange.js";
import type { H2Request } from "../http2/h2-request.js";
import { h1ToH2Fields } from "../http2/h2-response-headers.js";
import type { ClientStream } from "../http2/client-stream.js";

/**
 * An h2 client's request is whole only at its END_STREAM, so its last byte waits for it (see
 * Http1SendRules); never sent again: it goes only on a connection fresh enough not to race the
 * app's idle close.
 */
const H2_CLIENT_RULES: Http1SendRules = { mayResend: false, holdLastByte: true };

/** One per stream; its app side is an UpstreamOwner of the HTTP/1.1 pool like the HTTP/1.1 exchange's. */
export class H2ToH1Exchange extends H2ClientExchange implements Http1AppUser {
  protected readonly app: Http1AppSide;

  constructor(context: RelayContext, pool: UpstreamPool, client: ClientStream, request: H2Request, remoteAddress: string | undefined, preRead?: Buffer, preReadEnded = true) {
    super(context, client, request, remoteAddress);
    this.app = new Http1AppSide(context, pool, request, this.record, H2_CLIENT_RULES, this);
    this.app.forward(http1RequestHead(request, { target: context.pathPrefix + request.url, clientAddress: clientAddressOf(remoteAddress), upstreamHost: context.upstreamHost }));
    this.attach(preRead, preReadEnded);
  }

  interim(head: ParsedHead): boolean {
    if (head.statusCode !== 100 && !this.client.headersSent) this.client.additionalHeaders(h1ToH2Fields(head.statusCode, head.headers));
    return true;
  }

  /** Never asked for: an h2 request carries no Upgrade (the app side refuses every 101). */
  switchedProtocols(): void {}

  tunnel(socket: Socket): void {
    socket.destroy();
  }

  head(head: ParsedHead): BodyDirective {
    const status = head.statusCode;
    const bodiless = this.request.method === "HEAD" || status === 204 || status === 304;
    this.client.respond(h1ToH2Fields(status, head.headers), bodiless);
    if (bodiless) this.responseEnded = true;
    return this.request.method === "HEAD" ? BODY.skip : BODY.parse;
  }

  /** A defect of ours in the HTTP/1.1 connection's callbacks (already destroyed): this stream only gets the 502, or its reset. */
  fault(error: unknown): void {
    this.context.reportFault(error);
    if (this.done) return;
    this.app.cancel();
    if (!this.app.answered) this.answerOwn(502, error instanceof Error ? error : new Error(String(error)), "upstream unavailable");
    else this.client.reset(false);
  }
}
