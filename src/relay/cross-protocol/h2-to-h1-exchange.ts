// One h2 stream relayed to an HTTP/1.1 app through the HTTP/1.1 pool (--upstream-protocol http1): the head translated once, the client's side here, the app's in http1/http1-app-side.ts.
import type { Socket } from "node:net";
import type { QueuedRequest } from "../../overload/concurrency-limiter.js";
import { OVERLOADED, recordOverloaded, requestAdmission, type AdmissionCandidate, type OverloadReason } from "../admission.js";
import { clientAddressOf } from "../client-address.js";
import { Http1AppSide, type Http1AppUser, type Http1SendRules } from "../http1/http1-app-side.js";
import { BODY, type BodyDirective, type ParsedHead } from "../http1/llhttp-binding.js";
import type { RelayContext } from "../relay-context.js";
import { RequestRecord, type DeadlineTarget } from "../request-record.js";
import type { DeadlineKind } from "../stream-deadlines.js";
import type { UpstreamPool } from "../http1/upstream-pool.js";
import { http1RequestHead } from "./h2-to-h1-head.js";
import { answerOwnError, answerWithPage } from "../http2/h2-own-answer.js";
import type { H2Request } from "../http2/h2-request.js";
import { h1ToH2Fields } from "../http2/h2-response-headers.js";
import { H2_ERROR } from "../../h2-codec/codec-error.js";
import type { ClientStream } from "../http2/client-stream.js";

/**
 * An h2 client's request is whole only at its END_STREAM, so its last byte waits for it (see
 * Http1SendRules); never sent again: it goes only on a connection fresh enough not to race the
 * app's idle close.
 */
const H2_CLIENT_RULES: Http1SendRules = { mayResend: false, holdLastByte: true };

/** One per stream; its app side is an UpstreamOwner of the HTTP/1.1 pool like the HTTP/1.1 exchange's. */
export class H2ToH1Exchange implements AdmissionCandidate, Http1AppUser, DeadlineTarget {
  readonly #context: RelayContext;
  readonly #client: ClientStream;
  readonly #request: H2Request;
  readonly #record: RequestRecord;
  readonly #app: Http1AppSide;
  #queued: QueuedRequest | undefined;
  #responseEnded = false;
  #done = false;
  /** A defect of ours in one of the client stream's callbacks (behind its port's fault boundary): its HTTP/1.1 connection is dropped and the stream reset. */
  readonly #fault = (error: unknown): void => {
    this.#context.reportFault(error);
    this.#app.cancel();
    this.#client.reset(false);
  };

  constructor(context: RelayContext, pool: UpstreamPool, client: ClientStream, request: H2Request, remoteAddress: string | undefined, preRead?: Buffer, preReadEnded = true) {
    this.#context = context;
    this.#client = client;
    this.#request = request;
    this.#record = new RequestRecord(context, request, remoteAddress, "HTTP/2");
    const head = http1RequestHead(request, { target: context.pathPrefix + request.url, clientAddress: clientAddressOf(remoteAddress), upstreamHost: context.upstreamHost });
    this.#app = new Http1AppSide(context, pool, request, this.#record, H2_CLIENT_RULES, this);
    this.#app.forward(head);
    // A body read before forwarding (the gRPC health hook's) is the first held for the connection.
    if (preRead !== undefined) this.#app.sendBody(preRead);
    if (request.bodiless || (preRead !== undefined && preReadEnded)) this.#app.endBody();
    client.pause();
    client.onData = (chunk) => this.#onClientData(chunk);
    // Told only for an END_STREAM the codec found well-formed (its DATA added up to the length).
    client.onEnd = () => this.#app.endBody();
    client.onDrain = () => this.#app.resume();
    client.onClose = () => this.#onClientClose();
    client.onFault = this.#fault;
  }

  start(): void {
    this.#queued = requestAdmission(this.#context, this);
  }

  admitted(waitedMs: number | undefined): void {
    this.#queued = undefined;
    this.#record.admitted(waitedMs !== undefined, waitedMs, this);
    this.#app.open();
  }

  rejected(_reason: "queue_timeout", waitedMs: number): void {
    this.#queued = undefined;
    this.refuseOverloaded("queue timeout", waitedMs);
  }

  refuseOverloaded(reason: OverloadReason, waitedMs: number): void {
    recordOverloaded(this.#context, this.#record, this.#request, reason, waitedMs);
    this.#answerOwn(503, new Error("overloaded"), "overloaded", true);
  }

  /** A view into the codec's read, written at once (the client is paused until the connection is ready). */
  #onClientData(chunk: Buffer): void {
    this.#context.garbage.streamed(chunk.length);
    if (this.#done) return;
    this.#record.bodyReceived(chunk.length);
    if (!this.#app.sendBody(chunk)) this.#client.pause();
  }

  resumeBody(): void {
    this.#client.resume();
  }

  interim(head: ParsedHead): boolean {
    if (head.statusCode !== 100 && !this.#client.headersSent) this.#client.additionalHeaders(h1ToH2Fields(head.statusCode, head.headers));
    return true;
  }

  /** Never asked for: an h2 request carries no Upgrade (the app side refuses every 101). */
  switchedProtocols(): void {}

  tunnel(socket: Socket): void {
    socket.destroy();
  }

  head(head: ParsedHead): BodyDirective {
    const status = head.statusCode;
    const bodiless = this.#request.method === "HEAD" || status === 204 || status === 304;
    this.#client.respond(h1ToH2Fields(status, head.headers), bodiless);
    if (bodiless) this.#responseEnded = true;
    return this.#request.method === "HEAD" ? BODY.skip : BODY.parse;
  }

  /** An app's 5xx replaced by the branded page (upstream-error-page.ts). */
  interceptError(status: number): void {
    this.#responseEnded = true;
    // What the client still sends is read and dropped, so its stream can close.
    this.#client.resume();
    answerWithPage(this.#context, this.#client, this.#request, this.#record, status);
  }

  data(chunk: Buffer): boolean {
    if (this.#done || this.#responseEnded) return true;
    this.#record.bodySent(chunk.length);
    return this.#client.write(chunk);
  }

  end(): void {
    if (this.#done || this.#responseEnded) return;
    this.#responseEnded = true;
    this.#client.end();
  }

  failBeforeHead(status: number, error: Error, reason: string): void {
    this.#answerOwn(status, error, reason);
  }

  /** The app's connection failed mid-answer: the client's stream is reset, so it can never look complete. */
  answerCut(): void {
    this.#client.reset(false);
  }

  /** A defect of ours in the HTTP/1.1 connection's callbacks (already destroyed): this stream only gets the 502, or its reset. */
  fault(error: unknown): void {
    this.#context.reportFault(error);
    if (this.#done) return;
    this.#app.cancel();
    if (!this.#app.answered) this.#answerOwn(502, error instanceof Error ? error : new Error(String(error)), "upstream unavailable");
    else this.#client.reset(false);
  }

  /** CONTRACT §15 (stream-deadlines.ts): the app's connection dropped; the client gets a 504 when nothing was answered yet, else RST_STREAM CANCEL. */
  endForDeadline(kind: DeadlineKind): void {
    if (this.#done) return;
    this.#app.cancel();
    if (kind === "duration" && !this.#client.headersSent) this.#answerOwn(504, new Error("max request duration reached"), "max request duration reached");
    else this.#client.reset(true);
  }

  #onClientClose(): void {
    const aborted = !this.#done && !(this.#responseEnded && this.#client.rstCode === H2_ERROR.NO_ERROR);
    this.#done = true;
    if (this.#queued !== undefined) this.#record.leftQueue(this.#queued);
    this.#queued = undefined;
    // A request or answer cut short leaves the connection mid-message: never reused.
    this.#app.cancel();
    this.#record.finished(aborted);
  }

  /** Our own answer (an error, before any head): the app is not asked (again); what the client still sends is read and dropped, so its stream can close. */
  #answerOwn(status: number, error: Error, reason: string, overloaded = false): void {
    if (this.#done || this.#client.headersSent) return;
    this.#app.cancel();
    this.#responseEnded = true;
    this.#client.resume();
    answerOwnError(this.#context, this.#client, this.#request, this.#record, status, error, reason, overloaded ? OVERLOADED : undefined);
  }
}
