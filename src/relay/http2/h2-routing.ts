// Where each h2 stream goes: a health answer of §2, a local gRPC service (the hook src/grpc/ plugs into), or the app over h2c or HTTP/1.1.
import { matchHealthPath, type HealthEndpoints } from "../../http/health.js";
import type { RelayContext } from "../relay-context.js";
import { RequestRecord } from "../request-record.js";
import { Exchange } from "../exchange.js";
import { H2ClientSide } from "./h2-client-side.js";
import { answerOwnError } from "./h2-own-answer.js";
import { streamWriter, type H2Request } from "./h2-request.js";
import type { H2cPool } from "./h2c-pool.js";
import type { ClientStream } from "./client-stream.js";
import { NO_STREAM_USER } from "./stream-port.js";
import type { LocalBodyReads } from "./local-body-reads.js";
import { sendGrpcError } from "./grpc-error.js";
import { GRPC_STATUS } from "../../grpc/grpc-status.js";

/** `--upstream-protocol` (CONTRACT §13). */
export type UpstreamProtocol = "auto" | "http1" | "h2c";

/**
 * A service the proxy answers itself on h2 (the grpc.health.v1 service of src/grpc/). `claims`
 * looks at the head only; a claimed stream's body (at most `bodyLimit` octets) is read whole,
 * then `answer` either writes the whole answer and returns true, or returns false and the stream
 * goes to the app untouched, with the body already read (another service name). A body longer
 * than `bodyLimit` is the app's: it goes there with what was read, the rest after it.
 */
export interface LocalH2Service {
  /** The longest body the service answers itself: no more than this (and one piece) is ever kept of a claimed stream. */
  readonly bodyLimit: number;
  claims(request: H2Request): boolean;
  answer(request: H2Request, body: Buffer, stream: ClientStream): boolean;
}

/**
 * Relays a stream to an HTTP/1.1 app (the one exchange, given by the listener above both
 * codecs, so this one needs nothing of HTTP/1.1's). `preRead`: the body a local service read first.
 */
export type ForwardToHttp1 = (stream: ClientStream, request: H2Request, remoteAddress: string | undefined, preRead: Buffer | undefined, preReadEnded: boolean) => void;

export interface H2RoutingParts {
  readonly health: HealthEndpoints;
  readonly context: RelayContext;
  readonly upstreamProtocol: UpstreamProtocol;
  /** `--upstream-protocol http1`: how a stream reaches the app. */
  readonly forwardToHttp1: ForwardToHttp1;
  /** The h2c pool, made at the first stream that needs one. */
  readonly h2cPool: () => H2cPool;
  /** Services answered locally before anything is forwarded; empty until src/grpc/ adds its own. */
  readonly localServices: readonly LocalH2Service[];
}

/** Routes one stream; health paths first (never queued, never recorded), as for HTTP/1.1. `bodyReads`: the listener's, for a local service's body. */
export function routeStream(parts: H2RoutingParts, stream: ClientStream, request: H2Request, remoteAddress: string | undefined, bodyReads: LocalBodyReads): void {
  const { health } = parts;
  const healthPath = matchHealthPath(request.method, request.url);
  if (healthPath !== undefined && health.owns(healthPath)) {
    // A body sent with it is read and dropped (the stream is never paused).
    const writer = streamWriter(stream, request);
    health.answer(healthPath, request, writer);
    return;
  }
  for (const service of parts.localServices) {
    if (service.claims(request)) {
      // Reset by the peer while its body is read: the stream closes, and nothing is answered. A
      // defect of ours in the service is behind the port's fault boundary: reported, the stream reset.
      bodyReads.read(
        stream,
        service.bodyLimit,
        (body: Buffer, ended: boolean) => {
          if (!ended || !service.answer(request, body, stream)) forward(parts, stream, request, remoteAddress, body, ended);
        },
        () => {
          // A claimed call is a native gRPC one: its own answer, then the rest of its body refused.
          sendGrpcError(stream, 408, "request body timed out", undefined, GRPC_STATUS.DEADLINE_EXCEEDED);
          stream.stopRequest();
        },
      );
      return;
    }
  }
  forward(parts, stream, request, remoteAddress, undefined);
}

/** To the app, in the protocol `--upstream-protocol` says; `preRead`: the body a local service read first. */
export function forward(parts: H2RoutingParts, stream: ClientStream, request: H2Request, remoteAddress: string | undefined, preRead: Buffer | undefined, preReadEnded = true): void {
  // The target (CONNECT, `OPTIONS *`) is the exchange's plan to judge, as for HTTP/1.1 (forward-plan.ts).
  if (parts.upstreamProtocol === "auto" && !parts.h2cPool().knowsProtocol) {
    // Until the app has answered a preface, the stream waits (nothing of it sent, its body held
    // by its own window); then it goes on, in the protocol the app turned out to speak.
    stream.pause();
    parts.h2cPool().learnProtocol(() => {
      if (!stream.closed) forwardKnowing(parts, stream, request, remoteAddress, preRead, preReadEnded);
    });
    return;
  }
  forwardKnowing(parts, stream, request, remoteAddress, preRead, preReadEnded);
}

/** To the app once `auto` knows what it speaks: HTTP/1.1 for `http1` or an app heard speaking it, else h2c. */
function forwardKnowing(parts: H2RoutingParts, stream: ClientStream, request: H2Request, remoteAddress: string | undefined, preRead: Buffer | undefined, preReadEnded: boolean): void {
  const { context } = parts;
  if (parts.upstreamProtocol === "http1" || (parts.upstreamProtocol === "auto" && parts.h2cPool().speaksHttp1)) {
    if (request.grpc) {
      const record = new RequestRecord(context, request, remoteAddress, "HTTP/2");
      answerOwnError(context, stream, request, record, 502, new Error("upstream speaks HTTP/1.1"), "upstream speaks HTTP/1.1", { message: "upstream speaks HTTP/1.1" });
      finishOnClose(stream, record);
      return;
    }
    parts.forwardToHttp1(stream, request, remoteAddress, preRead, preReadEnded);
    return;
  }
  new Exchange(context, new H2ClientSide(stream, request, remoteAddress, preRead, preReadEnded), parts.h2cPool()).start();
}

/** An answer of ours on the stream: its record is finished when the stream closes. */
function finishOnClose(stream: ClientStream, record: RequestRecord): void {
  stream.user = { ...NO_STREAM_USER, streamClosed: () => record.finished(false) };
}
