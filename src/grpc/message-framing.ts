// gRPC's length-prefixed messages: a compressed flag, a 4-byte big-endian length, the message; a unary body is exactly one of them.
import { GRPC_STATUS } from "./grpc-status.js";

export const FRAME_PREFIX_BYTES = 5;

/** One message framed for a DATA frame: flag 0 (we never compress), length, bytes. */
export function frameMessage(message: Uint8Array): Buffer {
  const framed = Buffer.allocUnsafe(FRAME_PREFIX_BYTES + message.length);
  framed[0] = 0;
  framed.writeUInt32BE(message.length, 1);
  framed.set(message, FRAME_PREFIX_BYTES);
  return framed;
}

/** Why a body is not one uncompressed message: the gRPC status to answer and its message. */
export interface FramingError {
  readonly status: number;
  readonly message: string;
}

/**
 * The one message of a unary request body. A compressed message (flag 1) is UNIMPLEMENTED (12),
 * as the gRPC spec has a server answer a compression it does not support: the proxy accepts only
 * identity, and clients do not compress unless the server advertised it. Anything else that is
 * not exactly one message (short, long, a second message, a flag other than 0 or 1) is
 * INVALID_ARGUMENT (3), like a body that is not a HealthCheckRequest.
 */
export function unframeUnary(body: Uint8Array): Uint8Array | FramingError {
  if (body.length < FRAME_PREFIX_BYTES) return { status: GRPC_STATUS.INVALID_ARGUMENT, message: "request is not one length-prefixed message" };
  const flag = body[0]!;
  if (flag === 1) return { status: GRPC_STATUS.UNIMPLEMENTED, message: "compressed messages are not supported (grpc-accept-encoding: identity)" };
  const length = ((body[1]! << 24) >>> 0) + (body[2]! << 16) + (body[3]! << 8) + body[4]!;
  if (flag !== 0 || length !== body.length - FRAME_PREFIX_BYTES) {
    return { status: GRPC_STATUS.INVALID_ARGUMENT, message: "request is not one length-prefixed message" };
  }
  return body.subarray(FRAME_PREFIX_BYTES);
}

/** Narrows {@link unframeUnary}'s answer. */
export function isFramingError(value: Uint8Array | FramingError): value is FramingError {
  return !(value instanceof Uint8Array);
}
