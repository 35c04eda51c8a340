// The client's side of an exchange whose client is an h2 stream, whatever the app speaks: admission, the request body to the app side, our own answers, deadlines, the answer's body and end, the stream's close.
import type { AppSide } from "../app-side.js";
import type { ErrorDetails } from "../../http/error-response.js";
import type { QueuedRequest } from "../../overload/concurrency-limiter.js";
import { OVERLOADED, recordOverloaded, requestAdmission, type AdmissionCandidate, type OverloadReason } from "../admission.js";
import type { RelayContext } from "../relay-context.js";
import { RequestRecord, type DeadlineTarget } from "../request-record.js";
import type { DeadlineKind } from "../stream-deadlines.js";
import { answerOwnError, answerWithPage } from "./h2-own-answer.js";
import type { H2Request } from "./h2-request.js";
import { relayedFields } from "./h2-response-headers.js";
import { H2_ERROR } from "../../h2-codec/codec-error.js";
import type { ClientStream } from "./client-stream.js";
import type { StreamUser } from "./stream-port.js";

/**
 * One per stream. A subclass makes the app side (`app`) for the app's protocol, then calls
 * `attach`, and turns that app side's heads into the stream's. It is the stream's user: what the
 * stream tells comes to its methods, each behind the port's fault boundary (stream-port.ts).
 */
export abstract class H2ClientExchange implements AdmissionCandidate, DeadlineTarget, StreamUser {
  protected readonly context: RelayContext;
  protected readonly client: ClientStream;
  protected readonly request: H2Request;
  protected readonly record: RequestRecord;
  protected abstract readonly app: AppSide;
  /** The app's trailers, which end the client's stream. */
  protected answerTrailers: string[] | undefined;
  protected responseEnded = false;
  protected done = false;
  #queued: QueuedRequest | undefined;
  /** The client's own request trailers, which end the body to the app. */
  #requestTrailers: string[] | undefined;

  constructor(context: RelayContext, client: ClientStream, request: H2Request, remoteAddress: string | undefined) {
    this.context = context;
    this.client = client;
    this.request = request;
    this.record = new RequestRecord(context, request, remoteAddress, "HTTP/2");
  }

  /** The app side exists: the stream is wired to it, a body read before forwarding (the gRPC health hook's) held first. */
  protected attach(preRead: Buffer | undefined, preReadEnded: boolean): void {
    const client = this.client;
    if (preRead !== undefined) this.app.sendBody(preRead);
    if (this.request.bodiless || (preRead !== undefined && preReadEnded)) this.app.endBody();
    // Nothing is read until the app side can take it: the client's window is the only buffer.
    client.pause();
    client.user = this;
  }

  // ---- what the client's stream tells (StreamUser) ----

  /** A view into the codec's read: the app side copies what it keeps. */
  streamData(chunk: Buffer): void {
    // Not counted for garbage here: the listener's socket reads are (H2ConnectionOptions.reads).
    this.record.bodyReceived(chunk.length);
    if (!this.app.sendBody(chunk)) this.client.pause();
  }

  streamTrailers(fields: readonly string[]): void {
    this.#requestTrailers = relayedFields(fields);
  }

  /** Told only for an END_STREAM the codec found well-formed (its DATA added up to any content-length). */
  streamEnd(): void {
    this.app.endBody(this.#requestTrailers);
  }

  streamDrain(): void {
    this.app.resume();
  }

  /** The client's stream closed: answered, reset by the client, or its connection gone. */
  streamClosed(): void {
    const aborted = !this.done && !(this.responseEnded && this.client.rstCode === H2_ERROR.NO_ERROR);
    this.done = true;
    if (this.#queued !== undefined) this.record.leftQueue(this.#queued);
    this.#queued = undefined;
    // A request or answer cut short leaves an HTTP/1.1 connection mid-message (never reused) and an h2c stream open: both let go.
    this.app.cancel();
    this.record.finished(aborted);
  }

  /** A defect of ours (or a send the codec refused) in one of this exchange's calls: this stream is reset both ways, nothing else. */
  streamFault(error: unknown): void {
    this.context.reportFault(error);
    this.app.cancel();
    this.client.reset(false);
  }

  // ---- admission ----

  start(): void {
    this.#queued = requestAdmission(this.context, this);
  }

  admitted(waitedMs: number | undefined): void {
    this.#queued = undefined;
    this.record.admitted(waitedMs !== undefined, waitedMs, this);
    this.app.open();
  }

  rejected(_reason: "queue_timeout", waitedMs: number): void {
    this.#queued = undefined;
    this.refuseOverloaded("queue timeout", waitedMs);
  }

  refuseOverloaded(reason: OverloadReason, waitedMs: number): void {
    recordOverloaded(this.context, this.record, this.request, reason, waitedMs);
    this.answerOwn(503, undefined, "overloaded", OVERLOADED);
  }

  resumeBody(): void {
    this.client.resume();
  }

  /** An app's 5xx replaced by the branded page (upstream-error-page.ts). */
  interceptError(status: number): void {
    this.responseEnded = true;
    // What the client still sends is read and dropped, so its stream can close.
    this.client.resume();
    answerWithPage(this.context, this.client, this.request, this.record, status);
  }

  data(chunk: Buffer): boolean {
    if (this.responseEnded) return true;
    this.record.bodySent(chunk.length);
    return this.client.write(chunk);
  }

  end(): void {
    if (this.responseEnded) return;
    this.responseEnded = true;
    // The app's trailers came before its end; none: an empty DATA with END_STREAM.
    this.client.end(undefined, this.answerTrailers);
  }

  /** The app failed after its head: the client's stream is reset too, so it can never look complete. */
  answerCut(): void {
    this.client.reset(false);
  }

  failBeforeHead(status: number, error: Error, reason: string): void {
    this.answerOwn(status, error, reason);
  }

  /**
   * CONTRACT §15 (stream-deadlines.ts): the app let go; the client gets a 504 when nothing was
   * answered yet, else RST_STREAM CANCEL. The record logs the deadline's line; the 504 adds none.
   */
  endForDeadline(kind: DeadlineKind): void {
    if (this.done) return;
    this.app.cancel();
    if (kind === "duration" && !this.client.headersSent) this.answerOwn(504, undefined, "max request duration reached");
    else this.client.reset(true);
  }

  /** Our own answer (an error, before any head; `error` logged unless undefined): the app is not asked (again); what the client still sends is read and dropped, so its stream can close. */
  protected answerOwn(status: number, error: Error | undefined, reason: string, details?: ErrorDetails): void {
    if (this.done || this.client.headersSent) return;
    this.app.cancel();
    this.responseEnded = true;
    this.client.resume();
    answerOwnError(this.context, this.client, this.request, this.record, status, error, reason, details);
  }
}
