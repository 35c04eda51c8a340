// A proxy-made answer on an h2 stream (refusals, 502/503/504): logged, recorded, and written as the envelope or page of §6, or in gRPC's form for a gRPC call.
import { fieldValue } from "../../h2-codec/field-list.js";
import { errorMessageFor, type ErrorDetails } from "../../http/error-response.js";
import { refusalAnswer } from "../own-errors.js";
import type { RelayContext } from "../relay-context.js";
import type { RequestRecord } from "../request-record.js";
import type { ClientStream } from "./client-stream.js";
import { sendGrpcError } from "./grpc-error.js";
import { streamWriter, type H2Request } from "./h2-request.js";

/**
 * Answers `status` for a request that reached no app (or whose app failed before its head).
 * `reason` is the log's fixed text, logged with `error`; no `error`: a line of its own said it
 * already (`overloaded`, `max request duration: exchange ended`). 400 and 501 get the bare JSON
 * refusal as over HTTP/1.1.
 */
export function answerOwnError(context: RelayContext, stream: ClientStream, request: H2Request, record: RequestRecord, status: number, error: Error | undefined, reason: string, details?: ErrorDetails): void {
  const requestId = record.requestId;
  if (error !== undefined) context.errorLog.proxyError(request, requestId, status, error, reason);
  record.responseHead(status);
  if (request.grpc) {
    sendGrpcError(stream, status, details?.message ?? (status === 400 || status === 501 ? reason : errorMessageFor(status)), requestId);
    record.grpcStatus = 14;
    return;
  }
  const writer = streamWriter(stream, request, (_status, bytes) => record.bodySent(bytes));
  if (status === 400 || status === 501) {
    const answer = refusalAnswer(status, reason, requestId);
    writer.send(status, answer.headers, answer.body);
    return;
  }
  context.errors.send(request, writer, status, requestId, details);
}

/** The branded page for an app's 5xx (upstream-error-page.ts); its status was recorded with the app's head. */
export function answerWithPage(context: RelayContext, stream: ClientStream, request: H2Request, record: RequestRecord, status: number): void {
  const writer = streamWriter(stream, request, (_status, bytes) => record.bodySent(bytes));
  context.errors.send(request, writer, status, record.requestId);
}

/** The (first) `grpc-status` of a response's head or trailers, a flat list, or undefined. */
export function grpcStatusOf(fields: readonly string[]): number | undefined {
  const value = fieldValue(fields, "grpc-status");
  if (value === undefined) return undefined;
  const status = Number(value);
  return Number.isInteger(status) ? status : undefined;
}
