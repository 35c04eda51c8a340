// Admission by the limiter (CONTRACT §10), one way for the exchanges of both protocols: admitted now, queued, or refused as overloaded with the warning and the 503's details.
import { withoutQuery } from "../access-log/access-log.js";
import type { ErrorDetails } from "../http/error-response.js";
import type { RequestView } from "../http/response-writer.js";
import type { AdmissionWaiter, QueuedRequest } from "../overload/concurrency-limiter.js";
import type { RelayContext } from "./relay-context.js";
import type { RequestRecord } from "./request-record.js";

export type OverloadReason = "queue full" | "queue timeout";

/** CONTRACT §10: the limiter's 503 says why and when to come back. */
export const OVERLOADED: ErrorDetails = { message: "overloaded", headers: ["retry-after", "1"] };

/** An exchange the limiter decides about. `admitted(undefined)`: no limiter, so no slot to release. */
export interface AdmissionCandidate extends AdmissionWaiter {
  admitted(waitedMs: number | undefined): void;
  /** Never reaches the app: the queue was full, or its wait ran out after `waitedMs`. */
  refuseOverloaded(reason: OverloadReason, waitedMs: number): void;
}

/**
 * Asks for a slot. The candidate is told at once when it is admitted or refused; when it has to
 * wait, its place in the queue is returned, to leave by (RequestRecord.leftQueue) if its client goes.
 */
export function requestAdmission(context: RelayContext, candidate: AdmissionCandidate): QueuedRequest | undefined {
  const limiter = context.limiter;
  if (limiter === undefined) {
    candidate.admitted(undefined);
    return undefined;
  }
  const admission = limiter.acquire(candidate);
  if (admission === "admitted") candidate.admitted(0);
  else if (admission === "rejected") candidate.refuseOverloaded("queue full", 0);
  else return admission;
  return undefined;
}

/** What every refusal for overload records before its 503: the wait, and the throttled warning of §10. */
export function recordOverloaded(context: RelayContext, record: RequestRecord, request: RequestView, reason: OverloadReason, waitedMs: number): void {
  record.refused(waitedMs);
  context.errorLog.warn("overloaded", { reason, requestId: record.requestId, method: request.method, url: withoutQuery(request.url), queueMs: waitedMs });
}
