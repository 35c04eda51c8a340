// gRPC status codes the proxy sends or reads, and grpc-message's percent-encoding (the gRPC over HTTP/2 spec).

/** The codes used here, by their names in grpc's code.proto. */
export const GRPC_STATUS = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
} as const;

/** `content-type` of every gRPC answer the proxy makes. */
export const GRPC_CONTENT_TYPE = "application/grpc";

/**
 * Whether a request's content-type makes it a gRPC call, `application/grpc*` as §13 says:
 * `application/grpc` alone, with a `+proto`-like suffix or parameters, or grpc-web's
 * `application/grpc-web*` (whose clients read a trailers-only head too).
 */
export function isGrpcContentType(contentType: string | undefined): boolean {
  if (contentType === undefined || contentType.length < 16) return false;
  if (contentType.slice(0, 16).toLowerCase() !== GRPC_CONTENT_TYPE) return false;
  if (contentType.length === 16) return true;
  const next = contentType.charCodeAt(16);
  return next === 0x2b /* + */ || next === 0x3b /* ; */ || next === 0x2d /* - */;
}

/** gRPC itself, not grpc-web: the calls whose answer carries HTTP/2 trailers (what the health service writes). */
export function isNativeGrpcContentType(contentType: string | undefined): boolean {
  return isGrpcContentType(contentType) && contentType!.charCodeAt(16) !== 0x2d /* - */;
}

/**
 * grpc-message as the spec writes it: printable ASCII but `%` as is, every other byte of the
 * UTF-8 as `%XX`. Our own messages are plain ASCII; this keeps an odd one from breaking a header.
 */
export function encodeGrpcMessage(message: string): string {
  if (/^[\x20-\x24\x26-\x7e]*$/.test(message)) return message;
  let encoded = "";
  for (const byte of Buffer.from(message, "utf8")) {
    encoded += byte >= 0x20 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return encoded;
}

/** Undoes {@link encodeGrpcMessage} (what the app's grpc-message means), leaving a malformed escape as sent. */
export function decodeGrpcMessage(value: string): string {
  if (!value.includes("%")) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
