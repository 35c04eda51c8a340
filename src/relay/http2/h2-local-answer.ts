// What the relay answers itself on an h2 stream once the routing has decided (a health path, a local service's claimed body, `OPTIONS *`, a refused target or gRPC call): how each is written, never where a stream goes.
import type { HealthEndpoints, HealthPath } from "../../http/health.js";
import type { RelayContext } from "../relay-context.js";
import { RequestRecord } from "../request-record.js";
import { answerOwnError } from "./h2-own-answer.js";
import { streamWriter, type H2Request } from "./h2-request.js";
import type { ClientStream } from "./client-stream.js";
import { NO_STREAM_USER } from "./stream-port.js";
import type { BodyReadDone, LocalBodyReads } from "./local-body-reads.js";
import { sendGrpcError } from "./grpc-error.js";
import { GRPC_STATUS } from "../../grpc/grpc-status.js";

/** A health path over h2: a body sent with it is read and dropped (the stream is never paused). */
export function answerHealthOnStream(health: HealthEndpoints, path: HealthPath, stream: ClientStream, request: H2Request): void {
  health.answer(path, request, streamWriter(stream, request));
}

/**
 * Reads a claimed stream's body (at most `limit` octets and one piece) for a local service,
 * then `done`. Reset by the peer while its body is read: the stream closes, and nothing is
 * answered. A defect of ours in the service is behind the port's fault boundary: reported, the
 * stream reset.
 */
export function readClaimedBody(bodyReads: LocalBodyReads, stream: ClientStream, limit: number, done: BodyReadDone): void {
  bodyReads.read(stream, limit, done, () => {
    // A claimed call is a native gRPC one: its own answer, then the rest of its body refused.
    sendGrpcError(stream, 408, "request body timed out", undefined, GRPC_STATUS.DEADLINE_EXCEEDED);
    stream.stopRequest();
  });
}

/** A gRPC call for an app that speaks HTTP/1.1: the gRPC error of CONTRACT §13, never a mangled call. */
export function refuseGrpcForHttp1(context: RelayContext, stream: ClientStream, request: H2Request, remoteAddress: string | undefined): void {
  const record = new RequestRecord(context, request, remoteAddress, "HTTP/2");
  answerOwnError(context, stream, request, record, 502, new Error("upstream speaks HTTP/1.1"), "upstream speaks HTTP/1.1", { message: "upstream speaks HTTP/1.1" });
  finishOnClose(stream, record);
}

/** An answer of ours on the stream: its record is finished when the stream closes. */
function finishOnClose(stream: ClientStream, record: RequestRecord): void {
  stream.user = { ...NO_STREAM_USER, streamClosed: () => record.finished(false) };
}
