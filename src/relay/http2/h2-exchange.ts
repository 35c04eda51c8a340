// One h2 stream relayed to an h2c app on a stream of its own: the client's side in h2-client-exchange.ts, the app's in h2c-app-side.ts; here the app's heads and trailers become the client's.
import { H2ClientExchange } from "./h2-client-exchange.js";
import { H2cAppSide, type H2cAppUser } from "./h2c-app-side.js";
import { clientAddressOf } from "../client-address.js";
import type { RelayContext } from "../relay-context.js";
import { upstreamH2Fields } from "./h2-forward-headers.js";
import { grpcStatusOf } from "./h2-own-answer.js";
import type { H2Request } from "./h2-request.js";
import { relayedFields } from "./h2-response-headers.js";
import type { ClientStream } from "./client-stream.js";
import type { H2cPool } from "./h2c-pool.js";

export class H2Exchange extends H2ClientExchange implements H2cAppUser {
  protected readonly app: H2cAppSide;
  readonly #remoteAddress: string | undefined;

  constructor(context: RelayContext, pool: H2cPool, client: ClientStream, request: H2Request, remoteAddress: string | undefined, preRead?: Buffer, preReadEnded = true) {
    super(context, client, request, remoteAddress);
    this.#remoteAddress = remoteAddress;
    this.app = new H2cAppSide(context, pool, request, this.record, this);
    this.attach(preRead, preReadEnded);
  }

  /**
   * The app's request head, the codec's flat list, made when it is sent (again, for a stream
   * the app refused) and dropped with the call: kept on the exchange for the whole call, V8
   * found these lists outliving its young generation and allocated them in the old one, where
   * each waited for a full collection (bench/grpc-profile.mjs --heap, BENCH_HEAP_SURVIVORS=1).
   */
  appHead(): string[] {
    const context = this.context;
    return upstreamH2Fields(this.request, { target: context.pathPrefix + this.request.url, clientAddress: clientAddressOf(this.#remoteAddress), upstreamHost: context.upstreamHost });
  }

  pauseBody(): void {
    this.client.pause();
  }

  /** A 1xx other than 100 (ours to send) goes on as HEADERS of its own, before the final head. */
  interim(fields: readonly string[]): boolean {
    const status = Number(fields[1]);
    if (status > 100 && !this.client.headersSent) this.client.additionalHeaders(relayedFields(fields));
    return true;
  }

  head(fields: readonly string[], ended: boolean): void {
    const grpcStatus = grpcStatusOf(fields);
    if (grpcStatus !== undefined) this.record.grpcStatus = grpcStatus;
    this.client.respond(relayedFields(fields), ended);
    if (ended) this.responseEnded = true;
  }

  trailers(fields: readonly string[]): void {
    this.answerTrailers = relayedFields(fields);
    const grpcStatus = grpcStatusOf(fields);
    if (grpcStatus !== undefined) this.record.grpcStatus = grpcStatus;
  }

  /** A defect of ours in one of the app stream's callbacks: this stream is reset both ways. */
  fault(error: unknown): void {
    this.streamFault(error);
  }
}
