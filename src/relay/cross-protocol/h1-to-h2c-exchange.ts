// One HTTP/1.1 request relayed to an h2c app on a stream of the h2c pool (--upstream-protocol h2c): the HTTP/1.1 codec's Transaction on the client side, the app's side in http2/h2c-app-side.ts.
import { headerObject } from "../http2/app-stream.js";
import { H2cAppSide, type H2cAppUser } from "../http2/h2c-app-side.js";
import { fieldValue } from "../../h2-codec/field-list.js";
import { parseAbsoluteTarget } from "../../http/request-target.js";
import type { ResponseWriter } from "../../http/response-writer.js";
import type { QueuedRequest } from "../../overload/concurrency-limiter.js";
import { OVERLOADED, recordOverloaded, requestAdmission, type AdmissionCandidate, type OverloadReason } from "../admission.js";
import { LAST_CHUNK, responseFramingFor, writeBodyChunk } from "../http1/body-framing.js";
import { CONTINUE_HEAD, expectsContinue } from "../http1/interim-responses.js";
import { recordGrpcFormError, refusalAnswer } from "../own-errors.js";
import type { ClientConnection } from "../http1/client-connection.js";
import type { Transaction } from "../http1/transaction.js";
import { clientAddressOf } from "../client-address.js";
import { relaysTransferCoding } from "../http1/forward-plan.js";
import type { RelayContext } from "../relay-context.js";
import { sendOwnAnswer } from "../http1/own-answer.js";
import type { RequestHead } from "../http1/request-head.js";
import { RequestRecord, type DeadlineTarget } from "../request-record.js";
import type { DeadlineKind } from "../stream-deadlines.js";
import { relayedResponseHead, type ResponseFraming } from "../http1/response-head.js";
import { h1ToH2cFields } from "./h1-to-h2c-fields.js";
import type { H2cPool } from "../http2/h2c-pool.js";

/** One per request; the connection runs it in pipelining order like any Transaction. */
export class H1ToH2cExchange implements Transaction, AdmissionCandidate, H2cAppUser, ResponseWriter, DeadlineTarget {
  readonly #context: RelayContext;
  readonly #client: ClientConnection;
  readonly #request: RequestHead;
  readonly #record: RequestRecord;
  readonly #app: H2cAppSide;
  /** The app's request head, the codec's flat list. */
  #fields: string[] | undefined;
  #queued: QueuedRequest | undefined;
  #framing: ResponseFraming = "none";
  /** A gRPC-form error's status is in the record already: our writer must not count its 200. */
  #statusRecorded = false;
  #done = false;

  constructor(context: RelayContext, pool: H2cPool, client: ClientConnection, request: RequestHead) {
    this.#context = context;
    this.#client = client;
    this.#request = request;
    this.#record = new RequestRecord(context, request, client.remoteAddress);
    this.#app = new H2cAppSide(context, pool, request, this.#record, this);
  }

  start(): void {
    const url = this.#request.url;
    let target: string;
    let authority = this.#request.header("host");
    if (url.charCodeAt(0) === 0x2f /* "/" */) target = this.#context.pathPrefix + url;
    else {
      const absolute = parseAbsoluteTarget(url);
      if (absolute === undefined) {
        if (url === "*" && this.#request.method === "OPTIONS") return this.send(200, ["content-length", "0"], Buffer.alloc(0));
        return this.#refuse(400, "bad request target");
      }
      target = this.#context.pathPrefix + absolute.path;
      authority = absolute.authority;
    }
    if (!relaysTransferCoding(this.#request)) return this.#refuse(501, "transfer coding not supported");
    this.#fields = h1ToH2cFields(this.#request, target, authority, { clientAddress: clientAddressOf(this.#client.remoteAddress), upstreamHost: this.#context.upstreamHost });
    this.#queued = requestAdmission(this.#context, this);
    // Queued, perhaps for seconds: between messages (no body still coming), its connection gives the parser back.
    if (this.#queued !== undefined) this.#client.parkParser();
  }

  admitted(waitedMs: number | undefined): void {
    this.#queued = undefined;
    this.#record.admitted(waitedMs !== undefined, waitedMs, this);
    // Answered as the HTTP/1.1 relay does, once the body has somewhere to go (held until the stream exists).
    if (expectsContinue(this.#request)) this.#client.write(CONTINUE_HEAD);
    this.#app.open();
  }

  rejected(_reason: "queue_timeout", waitedMs: number): void {
    this.#queued = undefined;
    this.refuseOverloaded("queue timeout", waitedMs);
  }

  refuseOverloaded(reason: OverloadReason, waitedMs: number): void {
    recordOverloaded(this.#context, this.#record, this.#request, reason, waitedMs);
    this.#statusRecorded = recordGrpcFormError(this.#record, this.#request, 503);
    this.#context.errors.send(this.#request, this, 503, this.#record.requestId, OVERLOADED);
  }

  appHead(): string[] {
    return this.#fields!;
  }

  /** A piece of the body (the parser's own copy): held while the stream is still to come, up to a bound. */
  onRequestBody(chunk: Buffer): void {
    this.#context.garbage.streamed(chunk.length);
    if (this.#done) return;
    this.#record.bodyReceived(chunk.length);
    if (!this.#app.sendBody(chunk, true)) this.#client.pauseForBody();
  }

  onRequestEnd(): void {
    this.#app.endBody();
  }

  onClientDrain(): void {
    this.#app.resume();
  }

  resumeBody(): void {
    if (!this.#done) this.#client.resumeForBody();
  }

  pauseBody(): void {
    this.#client.pauseForBody();
  }

  /**
   * An interim answer (103 Early Hints, say) goes to an HTTP/1.1 client as it comes, held back by
   * its socket like body bytes (an HTTP/1.0 one cannot read it; a 100 was ours to send, on the
   * request's Expect).
   */
  interim(fields: readonly string[]): boolean {
    const status = Number(fields[1]);
    if (status === 100 || this.#request.versionMinor < 1) return true;
    return this.#client.write(relayedResponseHead(status, "", http1Fields(fields), { hasContentLength: true, hasDate: true }, "none", true));
  }

  /** The app's head (the codec's flat list) as HTTP/1.1 (http1Fields), framed for this client. */
  head(fields: readonly string[], ended: boolean): void {
    const status = Number(fields[1]);
    const flat = http1Fields(fields);
    const hasContentLength = fieldValue(fields, "content-length") !== undefined;
    // An h2 answer that ended with its HEADERS (`ended`) has an empty body: said as a length of 0.
    this.#framing = responseFramingFor(this.#request.method, status, hasContentLength || ended, this.#request.versionMinor);
    if (this.#framing === "length" && !hasContentLength) flat.push("content-length", "0");
    else if (this.#framing === "close") this.#client.closeAfterAnswer();
    this.#client.write(relayedResponseHead(status, "", flat, { hasContentLength: true, hasDate: fieldValue(fields, "date") !== undefined }, this.#framing, this.#client.keepAlive));
  }

  /** An app's 5xx replaced by the branded page (upstream-error-page.ts), with the app's status. */
  interceptError(status: number): void {
    // Counted with the app's head.
    this.#statusRecorded = true;
    this.#context.errors.send(this.#request, this, status, this.#record.requestId);
  }

  data(chunk: Buffer): boolean {
    if (this.#framing === "none") return true;
    this.#record.bodySent(chunk.length);
    return writeBodyChunk(this.#client.socket, this.#framing === "chunked", chunk);
  }

  /** An HTTP/1.1 client is not sent the app's trailers (nor is one of an HTTP/1.1 app). */
  trailers(): void {}

  end(): void {
    if (this.#done) return;
    if (this.#framing === "chunked") this.#client.write(LAST_CHUNK);
    this.#done = true;
    this.#record.finished(false);
    this.#client.resumeForBody();
    this.#client.responseEnded(this);
  }

  /** Mid-body: the client's response ends abruptly so it can never look complete. */
  answerCut(): void {
    if (this.#done) return;
    this.#done = true;
    this.#record.finished(false);
    this.#client.destroy();
  }

  failBeforeHead(status: number, error: Error, reason: string): void {
    this.#fail(status, error, reason);
  }

  /** CONTRACT §15 (stream-deadlines.ts): the app's stream gets RST_STREAM CANCEL; the client a 504 when nothing was answered yet, else the cut. */
  endForDeadline(kind: DeadlineKind): void {
    if (this.#done) return;
    const answerBegun = this.#app.answered;
    this.#app.cancel();
    if (kind === "duration" && !answerBegun) {
      this.#client.closeAfterAnswer();
      return this.#fail(504, new Error("max request duration reached"), "max request duration reached");
    }
    this.#done = true;
    this.#record.finished(false);
    this.#client.destroy();
  }

  /** A defect of ours in one of the app stream's callbacks (behind its port's fault boundary): the client connection's fault boundary ends this request. */
  fault(error: unknown): void {
    this.#client.fault(error);
  }

  /** A defect of ours on the client's connection: released as if the client had gone (its connection is cut). */
  abandon(): boolean {
    this.onClientGone();
    return false;
  }

  onClientGone(): void {
    if (this.#done) return;
    this.#done = true;
    if (this.#queued !== undefined) this.#record.leftQueue(this.#queued);
    this.#queued = undefined;
    this.#app.cancel();
    this.#record.finished(true);
  }

  #refuse(status: 400 | 501, reason: string): void {
    const requestId = this.#record.requestId;
    this.#context.errorLog.proxyError(this.#request, requestId, status, new Error(reason), reason);
    const answer = refusalAnswer(status, reason, requestId);
    this.#client.closeAfterAnswer();
    this.send(status, answer.headers, answer.body);
  }

  #fail(status: number, error: Error, reason: string): void {
    this.#app.cancel();
    this.#context.errorLog.proxyError(this.#request, this.#record.requestId, status, error, reason);
    this.#statusRecorded = recordGrpcFormError(this.#record, this.#request, status);
    this.#context.errors.send(this.#request, this, status, this.#record.requestId);
  }

  /** A whole answer of our own, which finishes the exchange. */
  send(status: number, headers: readonly string[], body: Buffer): void {
    this.#done = true;
    this.#app.cancel();
    sendOwnAnswer(this.#client, this, this.#request, this.#record, this.#statusRecorded, { status, headers, body });
  }
}

/**
 * An h2c app's head, interim or final (the codec's flat list), as HTTP/1.1 fields: pseudo-headers
 * dropped, repeats joined as node joins them, the first of a single-value field kept.
 */
function http1Fields(fields: readonly string[]): string[] {
  const headers = headerObject(fields);
  const flat: string[] = [];
  for (const name of Object.keys(headers)) {
    if (name.charCodeAt(0) === 0x3a) continue;
    const value = headers[name];
    if (Array.isArray(value)) for (const one of value) flat.push(name, one);
    else if (value !== undefined) flat.push(name, String(value));
  }
  return flat;
}
