// What the exchanges of both protocols share about a proxy-made error: the bare JSON refusal of a request that cannot be forwarded, and what a gRPC-form error records.
import { GRPC_STATUS } from "../grpc/grpc-status.js";
import { jsonErrorBody, wantsGrpcError } from "../http/error-response.js";
import type { RequestView } from "../http/response-writer.js";
import type { RequestRecord } from "./request-record.js";

/** A whole answer of our own, headers as a flat list. */
export interface OwnAnswer {
  readonly headers: readonly string[];
  readonly body: Buffer;
}

/** 400 and 501: the client's request cannot be forwarded. No branded page, the fixed reason in the JSON envelope. */
export function refusalAnswer(status: 400 | 501, reason: string, requestId: string): OwnAnswer {
  const body = jsonErrorBody(status, requestId, reason);
  return { headers: ["content-type", "application/json", "content-length", String(body.length), "cache-control", "no-store", "x-request-id", requestId], body };
}

/**
 * A gRPC call's proxy-made 502-504 goes out in gRPC's form, carried in a 200 (CONTRACT §13):
 * metrics and the access log still count the proxy's status, and `grpcStatus` 14, as on h2.
 * Returns whether the status was recorded here (the writer must then not record its 200).
 */
export function recordGrpcFormError(record: RequestRecord, request: RequestView, status: number): boolean {
  if (!wantsGrpcError(request, status)) return false;
  record.responseHead(status);
  record.grpcStatus = GRPC_STATUS.UNAVAILABLE;
  return true;
}
