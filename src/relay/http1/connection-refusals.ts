// The answers an HTTP/1.1 connection ends with when no request of it can be answered otherwise: node:http's to what llhttp refused (none to a peer that speaks neither HTTP/1.x nor HTTP/2), the 408 of a head too slow, the 502 of a head a defect of ours cut.
import { ownResponseHead } from "./response-head.js";

/** llhttp's errors that are not a plain 400, with node:http's answers. */
const ERROR_STATUS: Readonly<Record<string, number>> = {
  HPE_HEADER_OVERFLOW: 431,
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 413,
};

const NO_BODY = ["content-length", "0"];

/** An HTTP version in a request line, in any case (llhttp's 400 for `http/1.1` stays a 400). */
const HTTP_VERSION = / HTTP\//i;

/** No request id: the head was never parsed whole. */
const INTERNAL_ERROR_BODY = JSON.stringify({ error: { code: 502, message: "upstream unavailable" } });
const INTERNAL_ERROR_HEADERS = ["content-type", "application/json", "content-length", String(INTERNAL_ERROR_BODY.length), "cache-control", "no-store"];

/** 400, 431 for a head too large, 413 for chunk extensions too long; the connection closes after it. */
export function parseErrorAnswer(code: string): string {
  return ownResponseHead(ERROR_STATUS[code] ?? 400, NO_BODY, false);
}

/**
 * Whether a connection whose first bytes llhttp refused speaks neither protocol of the listener:
 * its first line is whole and carries no HTTP version, so it is neither an HTTP/1.x request line
 * nor the HTTP/2 preface. RFC 9113 §3.4 treats an invalid preface as a connection error and lets
 * the close stand for the GOAWAY; an HTTP/1.1 answer would be bytes such a peer cannot read
 * (h2spec 3.5/2 reads them as a frame too large). A line with a version, or one not yet whole
 * (nothing to judge it by), keeps its 400.
 */
export function speaksNeitherProtocol(opening: Buffer): boolean {
  const lineEnd = opening.indexOf(0x0a);
  return lineEnd !== -1 && !HTTP_VERSION.test(opening.latin1Slice(0, lineEnd));
}

/** Slowloris: a head not complete within the header timeout. */
export function headTimeoutAnswer(): string {
  return ownResponseHead(408, NO_BODY, false);
}

/** A request whose head a defect of ours cut short, before it had a transaction. */
export function internalErrorAnswer(): string {
  return ownResponseHead(502, INTERNAL_ERROR_HEADERS, false) + INTERNAL_ERROR_BODY;
}
