// A whole answer of the proxy's own to an HTTP/1.1 client, which ends the transaction that made it: recorded, written, and what is left of its request body read and dropped.
import type { RequestRecord } from "../request-record.js";
import type { ClientConnection } from "./client-connection.js";
import type { RequestHead } from "./request-head.js";
import type { Transaction } from "./transaction.js";

/** `statusRecorded`: the record has the answer's status already (an intercepted 5xx, a gRPC-form error's own). */
export function sendOwnAnswer(
  client: ClientConnection,
  transaction: Transaction,
  request: RequestHead,
  record: RequestRecord,
  statusRecorded: boolean,
  answer: { status: number; headers: readonly string[]; body: Buffer },
): void {
  if (!statusRecorded) record.responseHead(answer.status);
  if (request.method !== "HEAD") record.bodySent(answer.body.length);
  client.sendWhole(request, answer.status, answer.headers, answer.body);
  record.finished(false);
  // The answer is settled; whatever is left of the request body is read and discarded.
  client.resumeForBody();
  client.responseEnded(transaction);
}
