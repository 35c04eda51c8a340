// The one place a proxy-made error for a gRPC call is written (CONTRACT §13): a trailers-only answer instead of the envelope or page of §6.
import type { ClientStream } from "./client-stream.js";

/** gRPC's UNAVAILABLE: the code for 502, 503 (overloaded) and 504, and for an HTTP/1.1-only app. */
export const GRPC_UNAVAILABLE = 14;

/**
 * `:status 200`, `content-type: application/grpc`, `grpc-status`, `grpc-message` (percent-encoded
 * as gRPC requires), in one HEADERS frame with END_STREAM. `httpStatus` is what the HTTP answer
 * would have been: kept for the record, the wire says 200 as gRPC requires. The grpc helper's
 * src/grpc/ may refine the code per status; every caller comes through here.
 */
export function sendGrpcError(stream: ClientStream, _httpStatus: number, message: string, requestId?: string, code = GRPC_UNAVAILABLE): void {
  if (stream.closed || stream.headersSent) return;
  const fields = [":status", "200", "content-type", "application/grpc", "grpc-status", String(code), "grpc-message", encodeURIComponent(message)];
  if (requestId !== undefined) fields.push("x-request-id", requestId);
  stream.respond(fields, true);
}
