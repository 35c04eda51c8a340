// The client's side of an exchange whose client speaks HTTP/1.1, whatever the app speaks: admission, the request body to the app side, the answer's body framed for this client, our own answers, deadlines, the client gone or a defect.
import type { AppSide } from "../app-side.js";
import type { ErrorDetails } from "../../http/error-response.js";
import type { ResponseWriter } from "../../http/response-writer.js";
import { withoutQuery } from "../../access-log/access-log.js";
import type { QueuedRequest } from "../../overload/concurrency-limiter.js";
import { OVERLOADED, recordOverloaded, requestAdmission, type AdmissionCandidate, type OverloadReason } from "../admission.js";
import { faultAt } from "../fault-injection.js";
import { recordGrpcFormError, refusalAnswer } from "../own-errors.js";
import type { RelayContext } from "../relay-context.js";
import { RequestRecord, type DeadlineTarget } from "../request-record.js";
import type { DeadlineKind } from "../stream-deadlines.js";
import { LAST_CHUNK, writeBodyChunk } from "./body-framing.js";
import type { ClientConnection } from "./client-connection.js";
import { CONTINUE_HEAD } from "./interim-responses.js";
import type { RequestHead } from "./request-head.js";
import type { ResponseFraming } from "./response-head.js";
import type { Transaction } from "./transaction.js";
import { sendOwnAnswer, writeWholeAnswer } from "./own-answer.js";

/**
 * One per request; the connection runs it in pipelining order. A subclass makes the app side
 * (`app`) for the app's protocol, plans the request in `start` (then `admit`), and writes the
 * app's head for this client, setting `responseFraming`.
 */
export abstract class Http1ClientExchange implements Transaction, AdmissionCandidate, ResponseWriter, DeadlineTarget {
  protected readonly context: RelayContext;
  protected readonly client: ClientConnection;
  protected readonly request: RequestHead;
  protected readonly record: RequestRecord;
  protected abstract readonly app: AppSide;
  /** `Expect: 100-continue`: answered once admitted, when the body has somewhere to go (as node:http and nginx do). */
  protected expectsContinue = false;
  protected responseFraming: ResponseFraming = "none";
  /** The answer's status is in the record already (an intercepted 5xx, a gRPC-form error): our writer must not count its own. */
  protected statusRecorded = false;
  protected done = false;
  #queued: QueuedRequest | undefined;

  constructor(context: RelayContext, client: ClientConnection, request: RequestHead) {
    this.context = context;
    this.client = client;
    this.request = request;
    this.record = new RequestRecord(context, request, client.remoteAddress);
  }

  abstract start(): void;

  /** Planned: to the limiter. Queued, perhaps for seconds: between messages (no body still coming), its connection gives the parser back. */
  protected admit(): void {
    this.#queued = requestAdmission(this.context, this);
    if (this.#queued !== undefined) this.client.parkParser();
  }

  /**
   * A slot is ours (at once, or after `waitedMs` in the queue): the request goes to the app.
   * The limiter calls this from another request's release or its queue timer: a fault here is
   * this request's, and must not break the limiter's loop.
   */
  admitted(waitedMs: number | undefined): void {
    this.#queued = undefined;
    // First: the slot is this request's to release, whatever fails after.
    this.record.admitted(waitedMs !== undefined, waitedMs, this);
    try {
      faultAt("limiter admit");
      if (this.expectsContinue) this.client.write(CONTINUE_HEAD);
      this.app.open();
    } catch (error) {
      this.client.fault(error);
    }
  }

  /** The queue's wait ran out (or the drain's did): the app never sees the request. */
  rejected(_reason: "queue_timeout", waitedMs: number): void {
    this.#queued = undefined;
    try {
      this.refuseOverloaded("queue timeout", waitedMs);
    } catch (error) {
      this.client.fault(error);
    }
  }

  refuseOverloaded(reason: OverloadReason, waitedMs: number): void {
    recordOverloaded(this.context, this.record, this.request, reason, waitedMs);
    this.finishWithPage(503, this.record.requestId, OVERLOADED);
  }

  /** A piece of the body: the parser's own copy. */
  onRequestBody(chunk: Buffer): void {
    this.context.garbage.streamed(chunk.length);
    if (this.done || !this.app.takesBody) return; // an HTTP/1.1 app answered already (an early 413): the rest is discarded
    this.record.bodyReceived(chunk.length);
    if (!this.app.sendBody(chunk)) this.client.pauseForBody();
  }

  onRequestEnd(): void {
    if (!this.done) this.app.endBody();
  }

  onClientDrain(): void {
    this.app.resume();
  }

  resumeBody(): void {
    if (!this.done) this.client.resumeForBody();
  }

  pauseBody(): void {
    this.client.pauseForBody();
  }

  /** An app's 5xx replaced by the branded page (upstream-error-page.ts), with the app's status: counted with the app's head. */
  interceptError(status: number): void {
    this.statusRecorded = true;
    this.finishWithPage(status, this.record.requestId);
  }

  data(chunk: Buffer): boolean {
    if (this.done || this.responseFraming === "none") return true;
    this.record.bodySent(chunk.length);
    return writeBodyChunk(this.client.socket, this.responseFraming === "chunked", chunk);
  }

  end(): void {
    if (this.done) return;
    if (this.responseFraming === "chunked") this.client.write(LAST_CHUNK);
    this.done = true;
    this.record.finished(false);
    this.client.resumeForBody();
    this.client.responseEnded(this);
  }

  /** Mid-body: the client's response ends abruptly so it can never look complete. */
  answerCut(): void {
    if (this.done) return;
    this.done = true;
    this.record.finished(false);
    this.client.destroy();
  }

  /** A proxy-made error before any byte of the answer was sent, logged at warn. */
  failBeforeHead(status: number, error: Error, reason: string): void {
    const requestId = this.record.requestId;
    this.context.errorLog.proxyError(this.request, requestId, status, error, reason);
    if (status === 400 || status === 501) {
      // The client's request cannot be forwarded, and the connection is not reused.
      const answer = refusalAnswer(status, reason, requestId);
      this.client.closeAfterAnswer();
      this.send(status, answer.headers, answer.body);
      return;
    }
    this.finishWithPage(status, requestId);
  }

  /**
   * --idle-timeout or --max-request-duration (CONTRACT §15, the rule in stream-deadlines.ts):
   * past the duration with no byte of an answer sent, a 504 (the record logs the deadline's
   * line); otherwise the client's connection closes and the answer is cut, so it can never look
   * complete.
   */
  endForDeadline(kind: DeadlineKind): void {
    if (this.done) return;
    const answerBegun = this.app.answered;
    this.release();
    if (kind === "duration" && !answerBegun && !this.client.socket.destroyed) {
      // The rest of the request body, if any, must not be read as a next request.
      this.client.closeAfterAnswer();
      this.finishWithPage(504, this.record.requestId);
      return;
    }
    this.record.finished(false);
    this.client.destroy();
  }

  /** A defect of ours on the client's connection: no byte of an answer yet, a 502 of our own, and the connection ends after it; else the cut. */
  abandon(): boolean {
    if (this.done) return false;
    this.release();
    if (this.app.answered || this.client.socket.destroyed) {
      // Part of the answer went out: only a cut can say it is not all.
      this.record.finished(false);
      return false;
    }
    const statusRecorded = recordGrpcFormError(this.record, this.request, 502);
    const writer: ResponseWriter = {
      send: (status, headers, body) => {
        if (!statusRecorded) this.record.responseHead(status);
        writeWholeAnswer(this.client, this.request, status, headers, body);
      },
    };
    this.context.errors.send(this.request, writer, 502, this.record.requestId);
    this.record.finished(false);
    return true;
  }

  onClientGone(): void {
    if (this.done) return;
    this.release();
    this.record.finished(true);
    this.context.log.debug({ method: this.request.method, url: withoutQuery(this.request.url) }, "client went away");
  }

  /** A defect of ours in one of the app side's callbacks: this request's, handled by its client connection's fault boundary. */
  fault(error: unknown): void {
    this.client.fault(error);
  }

  /** Ended from outside (the client gone, a fault, a deadline): it leaves the queue, or the app is let go mid-exchange. */
  protected release(): void {
    this.done = true;
    if (this.#queued !== undefined) this.record.leftQueue(this.#queued);
    this.#queued = undefined;
    this.app.cancel();
  }

  protected finishWithPage(status: number, requestId: string, details?: ErrorDetails): void {
    if (recordGrpcFormError(this.record, this.request, status)) this.statusRecorded = true;
    this.context.errors.send(this.request, this, status, requestId, details);
  }

  /** Writes a whole answer of our own (through the error pages, or directly) and finishes the exchange; the app is not asked (again). */
  send(status: number, headers: readonly string[], body: Buffer): void {
    this.done = true;
    this.app.cancel();
    // An intercepted 5xx was counted when the app's head came; the page keeps its status.
    sendOwnAnswer(this.client, this, this.request, this.record, this.statusRecorded, { status, headers, body });
  }
}
