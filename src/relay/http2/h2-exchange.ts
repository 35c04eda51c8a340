// One h2 stream relayed to an h2c app on a stream of its own: admitted by the limiter, the client's side here, the app's in h2c-app-side.ts; bodies moved with each side's flow control, trailers and resets carried both ways.
import { H2cAppSide, type H2cAppUser } from "./h2c-app-side.js";
import type { QueuedRequest } from "../../overload/concurrency-limiter.js";
import { OVERLOADED, recordOverloaded, requestAdmission, type AdmissionCandidate, type OverloadReason } from "../admission.js";
import { clientAddressOf } from "../client-address.js";
import type { RelayContext } from "../relay-context.js";
import { RequestRecord, type DeadlineTarget } from "../request-record.js";
import type { DeadlineKind } from "../stream-deadlines.js";
import { upstreamH2Fields } from "./h2-forward-headers.js";
import { answerOwnError, answerWithPage, grpcStatusOf } from "./h2-own-answer.js";
import type { H2Request } from "./h2-request.js";
import { relayedFields } from "./h2-response-headers.js";
import { H2_ERROR } from "../../h2-codec/codec-error.js";
import type { ClientStream } from "./client-stream.js";
import type { H2cPool } from "./h2c-pool.js";

/**
 * One per stream. Its callbacks on the client's port are its own methods, each behind the port's
 * fault boundary (stream-port.ts), which hands a defect of ours to `fault`.
 */
export class H2Exchange implements AdmissionCandidate, H2cAppUser, DeadlineTarget {
  readonly #context: RelayContext;
  readonly #client: ClientStream;
  readonly #request: H2Request;
  readonly #record: RequestRecord;
  readonly #app: H2cAppSide;
  readonly #remoteAddress: string | undefined;
  #queued: QueuedRequest | undefined;
  #trailers: string[] | undefined;
  /** The client's own request trailers, which end the app's stream. */
  #requestTrailers: string[] | undefined;
  #responseEnded = false;
  #done = false;
  /** A defect of ours (or a send the codec refused) in one of this stream's callbacks: this stream is reset both ways, nothing else. */
  readonly fault = (error: unknown): void => {
    this.#context.reportFault(error);
    this.#app.cancel();
    this.#client.reset(false);
  };

  constructor(context: RelayContext, pool: H2cPool, client: ClientStream, request: H2Request, remoteAddress: string | undefined, preRead?: Buffer, preReadEnded = true) {
    this.#context = context;
    this.#client = client;
    this.#request = request;
    this.#record = new RequestRecord(context, request, remoteAddress, "HTTP/2");
    this.#app = new H2cAppSide(context, pool, request, this.#record, this);
    this.#remoteAddress = remoteAddress;
    // A body read before forwarding (the gRPC health hook's) is the first held for the stream.
    if (preRead !== undefined) this.#app.sendBody(preRead, true);
    if (request.bodiless || (preRead !== undefined && preReadEnded)) this.#app.endBody();
    // Nothing is read until the app's stream exists: the client's window is the only buffer.
    client.pause();
    client.onData = (chunk) => this.#onClientData(chunk);
    client.onEnd = () => this.#app.endBody(this.#requestTrailers);
    client.onDrain = () => this.#app.resume();
    client.onTrailers = (fields) => {
      this.#requestTrailers = relayedFields(fields);
    };
    client.onClose = () => this.#onClientClose();
    client.onFault = this.fault;
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

  /**
   * The app's request head, the codec's flat list, made when it is sent (again, for a stream
   * the app refused) and dropped with the call: kept on the exchange for the whole call, V8
   * found these lists outliving its young generation and allocated them in the old one, where
   * each waited for a full collection (bench/grpc-profile.mjs --heap, BENCH_HEAP_SURVIVORS=1).
   */
  appHead(): string[] {
    const context = this.#context;
    return upstreamH2Fields(this.#request, { target: context.pathPrefix + this.#request.url, clientAddress: clientAddressOf(this.#remoteAddress), upstreamHost: context.upstreamHost });
  }

  #onClientData(chunk: Buffer): void {
    this.#context.garbage.streamed(chunk.length);
    this.#record.bodyReceived(chunk.length);
    // A view into the codec's read buffer: the app side copies what it keeps.
    if (!this.#app.sendBody(chunk, false)) this.#client.pause();
  }

  resumeBody(): void {
    this.#client.resume();
  }

  pauseBody(): void {
    this.#client.pause();
  }

  /** A 1xx other than 100 (ours to send) goes on as HEADERS of its own, before the final head. */
  interim(fields: readonly string[]): boolean {
    const status = Number(fields[1]);
    if (status > 100 && !this.#client.headersSent) this.#client.additionalHeaders(relayedFields(fields));
    return true;
  }

  head(fields: readonly string[], ended: boolean): void {
    const grpcStatus = grpcStatusOf(fields);
    if (grpcStatus !== undefined) this.#record.grpcStatus = grpcStatus;
    this.#client.respond(relayedFields(fields), ended);
    if (ended) this.#responseEnded = true;
  }

  /** An app's 5xx replaced by the branded page (upstream-error-page.ts). */
  interceptError(status: number): void {
    this.#responseEnded = true;
    // What the client still sends is read and dropped, so its stream can close.
    this.#client.resume();
    answerWithPage(this.#context, this.#client, this.#request, this.#record, status);
  }

  data(chunk: Buffer): boolean {
    this.#record.bodySent(chunk.length);
    return this.#client.write(chunk);
  }

  trailers(fields: readonly string[]): void {
    this.#trailers = relayedFields(fields);
    const grpcStatus = grpcStatusOf(fields);
    if (grpcStatus !== undefined) this.#record.grpcStatus = grpcStatus;
  }

  end(): void {
    if (this.#responseEnded) return;
    this.#responseEnded = true;
    // The app's trailers came before its end; none: an empty DATA with END_STREAM.
    this.#client.end(undefined, this.#trailers);
  }

  /** The app's stream reset after its head: the client's stream is reset too, so it can never look complete. */
  answerCut(): void {
    this.#client.reset(false);
  }

  failBeforeHead(status: number, error: Error, reason: string): void {
    this.#answerOwn(status, error, reason);
  }

  /** CONTRACT §15 (stream-deadlines.ts): RST_STREAM CANCEL both ways, or a 504 when nothing was answered yet. */
  endForDeadline(kind: DeadlineKind): void {
    if (this.#done) return;
    this.#app.cancel();
    if (kind === "duration" && !this.#client.headersSent) this.#answerOwn(504, new Error("max request duration reached"), "max request duration reached");
    else this.#client.reset(true);
  }

  /** The client's stream closed: answered, reset by the client, or its connection gone. */
  #onClientClose(): void {
    const aborted = !this.#done && !(this.#responseEnded && this.#client.rstCode === H2_ERROR.NO_ERROR);
    this.#done = true;
    if (this.#queued !== undefined) this.#record.leftQueue(this.#queued);
    this.#queued = undefined;
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
