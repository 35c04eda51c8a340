// Where each request on the listener goes, whichever protocol it came in: a health answer of §2, a local service (the hook src/grpc-health/ plugs into), or the app over HTTP/1.1 or h2c; decided here once, each answer written by its protocol's side.
import { matchHealthPath, type HealthEndpoints, type HealthPath } from "../http/health.js";
import type { RelayContext } from "./relay-context.js";
import { Exchange } from "./exchange.js";
import { Http1ClientSide } from "./http1/http1-client-side.js";
import { H2ClientSide } from "./http2/h2-client-side.js";
import { CODING_REFUSED, LocalAnswer, http1Refusal } from "./http1/local-answer.js";
import type { ClientConnection } from "./http1/client-connection.js";
import type { RequestHead } from "./http1/request-head.js";
import type { Transaction } from "./http1/transaction.js";
import type { UpstreamPool } from "./http1/upstream-pool.js";
import { answerHealthOnStream, readClaimedBody, refuseGrpcForHttp1 } from "./http2/h2-local-answer.js";
import type { H2Request } from "./http2/h2-request.js";
import type { H2cPool } from "./http2/h2c-pool.js";
import type { ClientStream } from "./http2/client-stream.js";
import type { LocalBodyReads } from "./http2/local-body-reads.js";

/** `--upstream-protocol` (CONTRACT §13). */
export type UpstreamProtocol = "auto" | "http1" | "h2c";

/**
 * A service the proxy answers itself on h2 (the grpc.health.v1 service of src/grpc-health/).
 * `claims` looks at the head only; a claimed stream's body (at most `bodyLimit` octets) is read
 * whole, then `answer` either writes the whole answer and returns true, or returns false and the
 * stream goes to the app untouched, with the body already read (another service name). A body
 * longer than `bodyLimit` is the app's: it goes there with what was read, the rest after it.
 * HTTP/1.1 requests are never offered: gRPC is HTTP/2 end to end (CONTRACT §13).
 */
export interface LocalH2Service {
  /** The longest body the service answers itself: no more than this (and one piece) is ever kept of a claimed stream. */
  readonly bodyLimit: number;
  claims(request: H2Request): boolean;
  answer(request: H2Request, body: Buffer, stream: ClientStream): boolean;
}

export interface RoutingParts {
  readonly health: HealthEndpoints;
  readonly context: RelayContext;
  readonly upstreamProtocol: UpstreamProtocol;
  /** Connections to an HTTP/1.1 app, for HTTP/1.1 clients and for h2 ones under `--upstream-protocol http1`. */
  readonly upstreamPool: UpstreamPool;
  /** The h2c pool, made at the first request that needs one. */
  readonly h2cPool: () => H2cPool;
  /** Services answered locally before anything is forwarded; empty until src/grpc-health/ adds its own. */
  readonly localServices: readonly LocalH2Service[];
}

/** The protocol a request reaches the app in, or "learn": `auto` waits for the app's first answer to a preface. */
type AppProtocol = "http1" | "h2c" | "learn";

/** Routes the listener's requests, HTTP/1.1 and h2 alike; the exchanges with the app are made here, above both codecs. */
export class Router {
  readonly #parts: RoutingParts;
  /** `--upstream-protocol h2c`: HTTP/1.1 requests go to the app over h2c too (upgrades stay HTTP/1.1). */
  readonly #h2cForHttp1: H2cPool | undefined;

  constructor(parts: RoutingParts) {
    this.#parts = parts;
    this.#h2cForHttp1 = parts.upstreamProtocol === "h2c" ? parts.h2cPool() : undefined;
  }

  /** The health path that is ours to answer, for either protocol (never queued, never recorded), or undefined: the request goes on. */
  #healthPathOf(method: string, url: string): HealthPath | undefined {
    const path = matchHealthPath(method, url);
    return path !== undefined && this.#parts.health.owns(path) ? path : undefined;
  }

  /**
   * The protocol a request reaches the app in (CONTRACT §13): `http1` and `h2c` say it for every
   * request, but an upgrade stays HTTP/1.1; `auto` keeps the client's protocol, unless an h2
   * client's app turned out to speak HTTP/1.1 only (asked once, at the first h2 stream).
   */
  #appProtocolFor(clientSpeaksHttp2: boolean, upgrade: boolean): AppProtocol {
    const { upstreamProtocol } = this.#parts;
    if (!clientSpeaksHttp2) return upstreamProtocol === "h2c" && !upgrade ? "h2c" : "http1";
    if (upstreamProtocol !== "auto") return upstreamProtocol;
    const pool = this.#parts.h2cPool();
    if (!pool.knowsProtocol) return "learn";
    return pool.speaksHttp1 ? "http1" : "h2c";
  }

  /** An HTTP/1.1 request's transaction: HTTP/1.1's own refusals first, then a health answer, else the app. */
  transactionFor(request: RequestHead, connection: ClientConnection): Transaction {
    const refusal = http1Refusal(request);
    if (refusal === CODING_REFUSED) return this.#exchangeFor(request, connection);
    if (refusal !== undefined) return new LocalAnswer(connection, request, refusal);
    const healthPath = this.#healthPathOf(request.method, request.url);
    if (healthPath !== undefined) {
      const health = this.#parts.health;
      return new LocalAnswer(connection, request, (own, writer) => health.answer(healthPath, own, writer));
    }
    return this.#exchangeFor(request, connection);
  }

  /** A request for the app: relayed in the protocol it speaks. */
  #exchangeFor(request: RequestHead, connection: ClientConnection): Transaction {
    const side = new Http1ClientSide(connection, request);
    new Exchange(this.#parts.context, side, this.#appProtocolFor(false, request.upgrade) === "h2c" ? this.#h2cForHttp1! : this.#parts.upstreamPool);
    return side;
  }

  /** Routes one h2 stream: a health answer, then a local service, else the app. `bodyReads`: the listener's, for a local service's body. */
  routeStream(stream: ClientStream, request: H2Request, remoteAddress: string | undefined, bodyReads: LocalBodyReads): void {
    const healthPath = this.#healthPathOf(request.method, request.url);
    if (healthPath !== undefined) {
      answerHealthOnStream(this.#parts.health, healthPath, stream, request);
      return;
    }
    for (const service of this.#parts.localServices) {
      if (service.claims(request)) {
        readClaimedBody(bodyReads, stream, service.bodyLimit, (body: Buffer, ended: boolean) => {
          if (!ended || !service.answer(request, body, stream)) this.#forward(stream, request, remoteAddress, body, ended);
        });
        return;
      }
    }
    this.#forward(stream, request, remoteAddress, undefined);
  }

  /** To the app, in the protocol `--upstream-protocol` says; `preRead`: the body a local service read first. */
  #forward(stream: ClientStream, request: H2Request, remoteAddress: string | undefined, preRead: Buffer | undefined, preReadEnded = true): void {
    // The target (CONNECT, `OPTIONS *`) is the exchange's plan to judge, as for HTTP/1.1 (forward-plan.ts).
    if (this.#appProtocolFor(true, false) === "learn") {
      // Until the app has answered a preface, the stream waits (nothing of it sent, its body held
      // by its own window); then it goes on, in the protocol the app turned out to speak.
      stream.pause();
      this.#parts.h2cPool().learnProtocol(() => {
        if (!stream.closed) this.#forwardKnowing(stream, request, remoteAddress, preRead, preReadEnded);
      });
      return;
    }
    this.#forwardKnowing(stream, request, remoteAddress, preRead, preReadEnded);
  }

  /** To the app once `auto` knows what it speaks: HTTP/1.1 for `http1` or an app heard speaking it, else h2c. */
  #forwardKnowing(stream: ClientStream, request: H2Request, remoteAddress: string | undefined, preRead: Buffer | undefined, preReadEnded: boolean): void {
    const context = this.#parts.context;
    if (this.#appProtocolFor(true, false) === "http1") {
      if (request.grpc) {
        refuseGrpcForHttp1(context, stream, request, remoteAddress);
        return;
      }
      new Exchange(context, new H2ClientSide(stream, request, remoteAddress, preRead, preReadEnded), this.#parts.upstreamPool).start();
      return;
    }
    new Exchange(context, new H2ClientSide(stream, request, remoteAddress, preRead, preReadEnded), this.#parts.h2cPool()).start();
  }
}
