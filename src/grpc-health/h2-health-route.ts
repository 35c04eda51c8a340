// The gRPC health service on the h2 side: claims POST /grpc.health.v1.Health/{Check,Watch} for src/relay/http2/h2-routing.ts and answers through a GrpcResponder over the stream.
import type { OutgoingHttpHeaders, ServerHttp2Stream } from "node:http2";
import type { H2Request } from "../relay/http2/h2-request.js";
import type { LocalH2Service } from "../relay/http2/h2-routing.js";
import type { GrpcResponder } from "./grpc-responder.js";
import { GRPC_CONTENT_TYPE, encodeGrpcMessage } from "../grpc/grpc-status.js";
import { healthMethodOf, type GrpcHealthService } from "./health-service.js";

/** The routing's hook: the head decides whether the body is read; the body whether the call is ours. */
export function healthRoute(service: GrpcHealthService): LocalH2Service {
  return {
    claims: (request: H2Request) => healthMethodOf(request.method, request.url, request.header("content-type")) !== undefined,
    answer: (request: H2Request, body: Buffer, stream: ServerHttp2Stream) =>
      service.answer(healthMethodOf(request.method, request.url, request.header("content-type"))!, body, new StreamResponder(stream)),
  };
}

/** One server stream as a GrpcResponder; every call after the stream closed does nothing. */
export class StreamResponder implements GrpcResponder {
  readonly #stream: ServerHttp2Stream;
  #trailers: OutgoingHttpHeaders | undefined;

  constructor(stream: ServerHttp2Stream) {
    this.#stream = stream;
    // A reset or a write after the peer left is the peer's business, never an uncaught error.
    stream.on("error", ignore);
  }

  sendHeaders(): void {
    if (!this.#open() || this.#stream.headersSent) return;
    this.#stream.respond({ ":status": 200, "content-type": GRPC_CONTENT_TYPE }, { waitForTrailers: true });
    this.#stream.once("wantTrailers", () => {
      if (this.#trailers !== undefined) this.#stream.sendTrailers(this.#trailers);
    });
  }

  sendMessage(framed: Buffer): boolean {
    if (!this.#open()) return true;
    return this.#stream.write(framed);
  }

  sendTrailers(status: number, message?: string): void {
    if (!this.#open()) return;
    this.#trailers = grpcStatusFields(status, message);
    this.#stream.end();
  }

  trailersOnly(status: number, message?: string): void {
    if (!this.#open() || this.#stream.headersSent) return;
    this.#stream.respond({ ":status": 200, "content-type": GRPC_CONTENT_TYPE, ...grpcStatusFields(status, message) }, { endStream: true });
  }

  onClose(listener: () => void): void {
    this.#stream.once("close", listener);
  }

  onWritable(listener: () => void): void {
    this.#stream.on("drain", listener);
  }

  #open(): boolean {
    return !this.#stream.destroyed && !this.#stream.closed;
  }
}

function grpcStatusFields(status: number, message: string | undefined): OutgoingHttpHeaders {
  return message === undefined ? { "grpc-status": String(status) } : { "grpc-status": String(status), "grpc-message": encodeGrpcMessage(message) };
}

function ignore(): void {}
