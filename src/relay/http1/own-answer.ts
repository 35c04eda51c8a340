// Whole answers of the proxy's own to an HTTP/1.1 client (health paths, proxy-made errors): written in one write, recorded, and the transaction that made them ended.
import type { ResponseWriter } from "../../http/response-writer.js";
import type { RequestRecord } from "../request-record.js";
import type { ClientConnection } from "./client-connection.js";
import type { RequestHead } from "./request-head.js";
import { ownResponseHead } from "./response-head.js";
import type { Transaction } from "./transaction.js";

/** Head and body in one write; the body is left out for HEAD. Nothing when the socket is gone. */
export function writeWholeAnswer(client: ClientConnection, request: RequestHead, status: number, headers: readonly string[], body: Buffer): void {
  const socket = client.socket;
  if (socket.destroyed) return;
  const keepAlive = client.keepAlive;
  socket.cork();
  client.write(ownResponseHead(status, headers, keepAlive));
  if (request.method !== "HEAD" && body.length > 0) socket.write(body);
  socket.uncork();
}

/** A writer for one transaction's whole answer (a health path's), which ends that transaction's response. */
export function wholeAnswerWriter(client: ClientConnection, request: RequestHead, transaction: Transaction): ResponseWriter {
  return {
    // Called at once, or later from a readiness check's promise: its own boundary either way.
    send: (status, headers, body) => {
      try {
        writeWholeAnswer(client, request, status, headers, body);
        client.responseEnded(transaction);
      } catch (error) {
        client.fault(error);
      }
    },
  };
}

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
  writeWholeAnswer(client, request, answer.status, answer.headers, answer.body);
  record.finished(false);
  // The answer is settled; whatever is left of the request body is read and discarded.
  client.resumeForBody();
  client.responseEnded(transaction);
}
