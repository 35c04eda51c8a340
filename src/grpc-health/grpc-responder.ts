// What the gRPC health service needs of one HTTP/2 stream: headers, framed messages, trailers or a trailers-only answer, and the stream's close and drain.

/**
 * One gRPC call's answer side. The HTTP/2 codec implements it over a server stream; the health
 * service never sees node:http2. Calls after the stream closed are ignored by the implementer.
 */
export interface GrpcResponder {
  /** `:status 200`, `content-type: application/grpc`; the messages follow. */
  sendHeaders(): void;
  /**
   * One length-prefixed message (see frameMessage). False when the stream is buffering past its
   * window: the caller sends nothing more until {@link onWritable} fires.
   */
  sendMessage(framed: Buffer): boolean;
  /** Ends the call after the messages: trailers `grpc-status` (and `grpc-message` when given). */
  sendTrailers(status: number, message?: string): void;
  /** The whole answer in one HEADERS frame: `:status 200`, content-type, `grpc-status`, `grpc-message`. */
  trailersOnly(status: number, message?: string): void;
  /** Runs once when the stream ends or is reset, by either side. */
  onClose(listener: () => void): void;
  /** Runs each time a buffering stream can take more. */
  onWritable(listener: () => void): void;
}
