// The gRPC health service on the h2 side: claims POST /grpc.health.v1.Health/{Check,Watch} for src/relay/routing.ts and answers through a GrpcResponder over the stream.
import type { ClientStream } from "../relay/http2/client-stream.js";
import type { StreamUser } from "../relay/http2/stream-port.js";
import type { H2Request } from "../relay/http2/h2-request.js";
import type { LocalH2Service } from "../relay/routing.js";
import type { GrpcResponder } from "./grpc-responder.js";
import { GRPC_CONTENT_TYPE, encodeGrpcMessage } from "../grpc/grpc-status.js";
import { MAX_HEALTH_REQUEST_BYTES, healthMethodOf, type GrpcHealthService } from "./health-service.js";

/** The routing's hook: the head decides whether the body is read; the body whether the call is ours. */
export function healthRoute(service: GrpcHealthService): LocalH2Service {
  return {
    bodyLimit: MAX_HEALTH_REQUEST_BYTES,
    claims: (request: H2Request) => healthMethodOf(request.method, request.url, request.header("content-type")) !== undefined,
    answer: (request: H2Request, body: Buffer, stream: ClientStream) =>
      service.answer(healthMethodOf(request.method, request.url, request.header("content-type"))!, body, new StreamResponder(stream)),
  };
}

/** One server stream as a GrpcResponder; every call after the stream closed does nothing. */
export class StreamResponder implements GrpcResponder, StreamUser {
  readonly #stream: ClientStream;
  #closeListeners: (() => void)[] | undefined;
  #writableListeners: (() => void)[] | undefined;

  constructor(stream: ClientStream) {
    this.#stream = stream;
  }

  sendHeaders(): void {
    if (this.#stream.closed || this.#stream.headersSent) return;
    this.#stream.respond([":status", "200", "content-type", GRPC_CONTENT_TYPE], false);
  }

  sendMessage(framed: Buffer): boolean {
    if (this.#stream.closed) return true;
    return this.#stream.write(framed);
  }

  sendTrailers(status: number, message?: string): void {
    if (this.#stream.closed) return;
    this.#stream.end(undefined, grpcStatusFields(status, message));
  }

  trailersOnly(status: number, message?: string): void {
    if (this.#stream.closed || this.#stream.headersSent) return;
    this.#stream.respond([":status", "200", "content-type", GRPC_CONTENT_TYPE, ...grpcStatusFields(status, message)], true);
  }

  onClose(listener: () => void): void {
    (this.#closeListeners ??= []).push(listener);
    this.#stream.user = this;
  }

  onWritable(listener: () => void): void {
    (this.#writableListeners ??= []).push(listener);
    this.#stream.user = this;
  }

  // ---- the stream's user once a listener is added: the body was read whole before the answer ----

  streamData(): void {}
  streamTrailers(): void {}
  streamEnd(): void {}

  streamDrain(): void {
    for (const listener of this.#writableListeners ?? []) listener();
  }

  streamClosed(): void {
    for (const listener of this.#closeListeners ?? []) listener();
  }
}

function grpcStatusFields(status: number, message: string | undefined): string[] {
  return message === undefined ? ["grpc-status", String(status)] : ["grpc-status", String(status), "grpc-message", encodeGrpcMessage(message)];
}
