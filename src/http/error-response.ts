// Proxy-made error responses (CONTRACT §6): a branded page for browser navigations, a JSON envelope for everyone else, gRPC's trailers-only form for gRPC calls (§13).
import { GRPC_CONTENT_TYPE, GRPC_STATUS, encodeGrpcMessage, isGrpcContentType } from "../grpc/grpc-status.js";
import { PROXY_ERRORS, escapeHtml, type ErrorPageSet } from "./error-pages.js";
import type { RequestView, ResponseWriter } from "./response-writer.js";

const GENERIC_MESSAGE = "proxy error";
const EMPTY = Buffer.alloc(0);

/**
 * A browser navigation names `text/html` explicitly; the any-type wildcard alone (curl, the
 * kubelet) and axios's `application/json, text/plain` plus wildcard do not, so API clients
 * always get JSON. A `text/html;q=0` refusal does not count as asking.
 */
export function wantsHtml(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  const lower = accept.toLowerCase();
  if (!lower.includes("text/html")) return false;
  for (const range of lower.split(",")) {
    const [type, ...params] = range.split(";");
    if (type?.trim() !== "text/html") continue;
    const refused = params.some((param) => /^\s*q\s*=\s*0(\.0*)?\s*$/i.test(param));
    if (!refused) return true;
  }
  return false;
}

/** The JSON envelope's message for a status. */
export function errorMessageFor(status: number): string {
  const known = PROXY_ERRORS[status as keyof typeof PROXY_ERRORS];
  return known ? known.title.toLowerCase() : GENERIC_MESSAGE;
}

/** The JSON envelope of CONTRACT §6: `{"error":{"code":502,"message":"upstream unavailable","requestId":"..."}}`. */
export function jsonErrorBody(status: number, requestId: string, message = errorMessageFor(status)): Buffer {
  return Buffer.from(JSON.stringify({ error: { code: status, message, requestId } }));
}

/** What a proxy-made error adds to the default: another JSON message (`overloaded`), more headers (`Retry-After`). */
export interface ErrorDetails {
  readonly message?: string;
  readonly headers?: readonly string[];
}

/**
 * A gRPC call's proxy-made 502, 503 or 504 (CONTRACT §13): `200`, `content-type:
 * application/grpc`, `grpc-status: 14` (UNAVAILABLE) and the envelope's message, no body: what a
 * gRPC client reads as the call's status, where JSON would be a protocol error that loses it.
 * Over HTTP/1.1 the same fields go in the head, with `content-length: 0`.
 */
export function grpcErrorHeaders(status: number, requestId: string, message = errorMessageFor(status)): string[] {
  return [
    "content-type",
    GRPC_CONTENT_TYPE,
    "grpc-status",
    String(GRPC_STATUS.UNAVAILABLE),
    "grpc-message",
    encodeGrpcMessage(message),
    "content-length",
    "0",
    "x-request-id",
    requestId,
  ];
}

/** Whether a proxy-made `status` for `request` takes gRPC's form: a gRPC call's 502, 503 or 504. */
export function wantsGrpcError(request: RequestView, status: number): boolean {
  return status >= 502 && status <= 504 && isGrpcContentType(request.header("content-type"));
}

/** Writes proxy-made errors; the status is never changed, only the body's form (gRPC calls: §13's form, carried in a 200). */
export class ErrorResponder {
  readonly #pages: ErrorPageSet;

  constructor(pages: ErrorPageSet) {
    this.#pages = pages;
  }

  /** Answers `status` with a page or JSON, `Cache-Control: no-store`, the request id, and the details' message and headers. */
  send(request: RequestView, writer: ResponseWriter, status: number, requestId: string, details: ErrorDetails = {}): void {
    if (wantsGrpcError(request, status)) {
      writer.send(200, [...grpcErrorHeaders(status, requestId, details.message), ...(details.headers ?? [])], EMPTY);
      return;
    }
    const html = wantsHtml(request.header("accept"));
    const body = html ? this.#renderPage(status, requestId) : jsonErrorBody(status, requestId, details.message);
    writer.send(
      status,
      [
        "content-type",
        html ? "text/html; charset=utf-8" : "application/json",
        "content-length",
        String(body.length),
        "cache-control",
        "no-store",
        "x-request-id",
        requestId,
        "vary",
        "Accept",
        ...(details.headers ?? []),
      ],
      body,
    );
  }

  /** The page an intercepted upstream 5xx is replaced with (browser navigations only). */
  pageBody(status: number, requestId: string): Buffer {
    return this.#renderPage(status, requestId);
  }

  #renderPage(status: number, requestId: string): Buffer {
    const page = this.#pages.pageFor(status);
    return Buffer.concat([page.before, Buffer.from(escapeHtml(requestId)), page.after]);
  }

}
