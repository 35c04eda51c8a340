// The client's side of an exchange whose client is an h2 stream, whatever the app speaks: the stream's user, the request body (and trailers) to the app side, the app's heads encoded as the codec's fields, our own answers, deadlines, the stream's close.
import type { ErrorDetails } from "../../http/error-response.js";
import type { AppSide } from "../app-side.js";
import type { ClientSide, ClientSideExchange } from "../client-side.js";
import type { RelayContext } from "../relay-context.js";
import type { RequestRecord } from "../request-record.js";
import type { DeadlineKind } from "../stream-deadlines.js";
import { answerOwnError, answerWithPage, grpcStatusOf } from "./h2-own-answer.js";
import { streamWriter, type H2Request } from "./h2-request.js";
import { answerFields, relayedFields } from "./h2-response-headers.js";
import { H2_ERROR } from "../../h2-codec/codec-error.js";
import type { ClientStream } from "./client-stream.js";
import type { StreamUser } from "./stream-port.js";

const NO_BODY = Buffer.alloc(0);

/**
 * One per stream, made with its exchange. It is the stream's user: what the stream tells comes
 * to its methods, each behind the port's fault boundary (stream-port.ts). `preRead`: a body read
 * before forwarding (the gRPC health hook's), held first.
 */
export class H2ClientSide implements ClientSide, StreamUser {
  readonly request: H2Request;
  readonly remoteAddress: string | undefined;
  readonly #client: ClientStream;
  readonly #preRead: Buffer | undefined;
  readonly #preReadEnded: boolean;
  #context!: RelayContext;
  #record!: RequestRecord;
  #app!: AppSide;
  #exchange!: ClientSideExchange;
  /** The app's trailers, which end the client's stream. */
  #answerTrailers: string[] | undefined;
  #responseEnded = false;
  #done = false;
  /** The client's own request trailers, which end the body to the app. */
  #requestTrailers: string[] | undefined;

  constructor(client: ClientStream, request: H2Request, remoteAddress: string | undefined, preRead?: Buffer, preReadEnded = true) {
    this.#client = client;
    this.request = request;
    this.remoteAddress = remoteAddress;
    this.#preRead = preRead;
    this.#preReadEnded = preReadEnded;
  }

  /** The app side exists: the stream is wired to it, a body read before forwarding held first. */
  attach(exchange: ClientSideExchange): void {
    this.#exchange = exchange;
    this.#context = exchange.context;
    this.#record = exchange.record;
    const app = (this.#app = exchange.app);
    const client = this.#client;
    const preRead = this.#preRead;
    if (preRead !== undefined) app.sendBody(preRead);
    if (this.request.bodiless || (preRead !== undefined && this.#preReadEnded)) app.endBody();
    // Nothing is read until the app side can take it: the client's window is the only buffer.
    client.pause();
    client.user = this;
  }

  // ---- what the client's stream tells (StreamUser) ----

  /** A view into the codec's read: the app side copies what it keeps. */
  streamData(chunk: Buffer): void {
    // Not counted for garbage here: the listener's socket reads are (H2ConnectionOptions.reads).
    this.#record.bodyReceived(chunk.length);
    if (!this.#app.sendBody(chunk)) this.#client.pause();
  }

  streamTrailers(fields: readonly string[]): void {
    this.#requestTrailers = relayedFields(fields);
  }

  /** Told only for an END_STREAM the codec found well-formed (its DATA added up to any content-length). */
  streamEnd(): void {
    this.#app.endBody(this.#requestTrailers);
  }

  streamDrain(): void {
    this.#app.resume();
  }

  /** The client's stream closed: answered, reset by the client, or its connection gone. */
  streamClosed(): void {
    const aborted = !this.#done && !(this.#responseEnded && this.#client.rstCode === H2_ERROR.NO_ERROR);
    this.#done = true;
    // A request or answer cut short leaves an HTTP/1.1 connection mid-message (never reused) and an h2c stream open: both let go.
    this.#exchange.release();
    this.#record.finished(aborted);
  }

  /** A defect of ours (or a send the codec refused) in one of this exchange's calls: this stream is reset both ways, nothing else. */
  streamFault(error: unknown): void {
    this.#context.reportFault(error);
    this.#app.cancel();
    this.#client.reset(false);
  }

  // ---- what the exchange asks (ClientSide) ----

  planned(): void {}

  queued(): void {}

  admitted(): void {}

  /** `OPTIONS *` asks about the server, which is ours to answer (as over HTTP/1.1). */
  answerServerOptions(): void {
    this.#app.cancel();
    this.#responseEnded = true;
    this.#client.resume();
    this.#record.responseHead(200);
    streamWriter(this.#client, this.request).send(200, ["content-length", "0"], NO_BODY);
  }

  /** Our own answer (an error, before any head; `error` logged unless undefined): the app is not asked (again); what the client still sends is read and dropped, so its stream can close. */
  answerOwn(status: number, error: Error | undefined, reason: string, details?: ErrorDetails): void {
    const client = this.#client;
    if (this.#done || client.headersSent) return;
    this.#app.cancel();
    this.#responseEnded = true;
    client.resume();
    answerOwnError(this.#context, client, this.request, this.#record, status, error, reason, details);
  }

  /** An app's 5xx replaced by the branded page (upstream-error-page.ts). */
  answerWithPage(status: number): void {
    this.#responseEnded = true;
    // What the client still sends is read and dropped, so its stream can close.
    this.#client.resume();
    answerWithPage(this.#context, this.#client, this.request, this.#record, status);
  }

  /** A 1xx other than 100 (ours to send) goes on as HEADERS of its own, before the final head. */
  interim(status: number, _message: string, fields: readonly string[]): boolean {
    if (status > 100 && !this.#client.headersSent) this.#client.additionalHeaders(answerFields(status, fields));
    return true;
  }

  /** The app's head as the codec's fields; no body follows an h2c app's that ended, nor a HEAD's, a 204's or a 304's. */
  head(status: number, _message: string, fields: readonly string[], ended: boolean): void {
    const grpcStatus = grpcStatusOf(fields);
    if (grpcStatus !== undefined) this.#record.grpcStatus = grpcStatus;
    const bodiless = ended || this.request.method === "HEAD" || status === 204 || status === 304;
    this.#client.respond(answerFields(status, fields), bodiless);
    if (bodiless) this.#responseEnded = true;
  }

  trailers(fields: readonly string[]): void {
    this.#answerTrailers = relayedFields(fields);
    const grpcStatus = grpcStatusOf(fields);
    if (grpcStatus !== undefined) this.#record.grpcStatus = grpcStatus;
  }

  data(chunk: Buffer): boolean {
    if (this.#responseEnded) return true;
    this.#record.bodySent(chunk.length);
    return this.#client.write(chunk);
  }

  end(): void {
    if (this.#responseEnded) return;
    this.#responseEnded = true;
    // The app's trailers came before its end; none: an empty DATA with END_STREAM.
    this.#client.end(undefined, this.#answerTrailers);
  }

  /** The app failed after its head: the client's stream is reset too, so it can never look complete. */
  cut(): void {
    this.#client.reset(false);
  }

  resumeBody(): void {
    this.#client.resume();
  }

  pauseBody(): void {
    this.#client.pause();
  }

  /** Never asked for: an h2 request carries no Upgrade (the app side refuses every 101). */
  switchedProtocols(): void {}

  tunnel(socket: { destroy(): void }): void {
    socket.destroy();
  }

  /**
   * CONTRACT §15 (stream-deadlines.ts): the app let go; the client gets a 504 when nothing was
   * answered yet, else RST_STREAM CANCEL. The record logs the deadline's line; the 504 adds none.
   */
  endForDeadline(kind: DeadlineKind): void {
    if (this.#done) return;
    this.#app.cancel();
    if (kind === "duration" && !this.#client.headersSent) this.answerOwn(504, undefined, "max request duration reached");
    else this.#client.reset(true);
  }

  /** A defect of ours in the app side's callbacks: this stream only gets a 502 when nothing was answered, else its reset. */
  fault(error: unknown): void {
    this.#context.reportFault(error);
    if (this.#done) return;
    this.#app.cancel();
    if (!this.#app.answered) this.answerOwn(502, error instanceof Error ? error : new Error(String(error)), "upstream unavailable");
    else this.#client.reset(false);
  }
}
