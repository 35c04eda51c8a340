// HTTP/1.1 body framing on a socket, for requests to the app and answers to clients alike: bytes as they are for a known length, chunk framing otherwise; and the framing an answer takes.
import type { Socket } from "node:net";
import type { ResponseFraming } from "./response-head.js";

/** The last chunk; trailers are not relayed over HTTP/1.1 (Trailer is hop-by-hop here). */
export const LAST_CHUNK = "0\r\n\r\n";

/**
 * One piece of a body: in chunk framing (size line, the data untouched, CRLF) or as it is.
 * False when the socket is above its high-water mark: the sender's brake.
 */
export function writeBodyChunk(socket: Socket, chunked: boolean, chunk: Buffer): boolean {
  if (!chunked) return socket.write(chunk);
  socket.write(`${chunk.length.toString(16)}\r\n`, "latin1");
  socket.write(chunk);
  return socket.write("\r\n", "latin1");
}

/**
 * How an answer's body reaches an HTTP/1.1 client. The status (or HEAD) says there is none,
 * whatever Content-Length says (RFC 9110 §6.4.1, §8.6); a length passes as it is; else chunked
 * for HTTP/1.1 and our close for HTTP/1.0, whose connection must then close after it.
 */
export function responseFramingFor(method: string, status: number, hasLength: boolean, versionMinor: number): ResponseFraming {
  if (method === "HEAD" || status === 204 || status === 304) return "none";
  if (hasLength) return "length";
  return versionMinor >= 1 ? "chunked" : "close";
}
