// The client's side of an exchange whose client speaks HTTP/1.1, whatever the app speaks: the transaction its connection runs, the request body to the app side, the app's heads encoded for this client (framed, case kept), our own answers, deadlines, a WebSocket's tunnel, the client gone or a defect.
import type { Socket } from "node:net";
import type { ErrorDetails } from "../../http/error-response.js";
import type { ResponseWriter } from "../../http/response-writer.js";
import { withoutQuery } from "../../access-log/access-log.js";
import type { AppSide, ReadEndWaiter } from "../app-side.js";
import type { ClientSide, ClientSideExchange } from "../client-side.js";
import type { Forwarding } from "../forward-plan.js";
import { recordGrpcFormError, refusalAnswer } from "../own-errors.js";
import type { RelayContext } from "../relay-context.js";
import type { RequestRecord } from "../request-record.js";
import type { DeadlineKind } from "../stream-deadlines.js";
import { LAST_CHUNK, responseFramingFor, writeBodyChunk } from "./body-framing.js";
import type { ClientConnection } from "./client-connection.js";
import { CONTINUE_HEAD, expectsContinue, switchingProtocolsHead } from "./interim-responses.js";
import type { RequestHead } from "./request-head.js";
import { relayedResponseHead, upstreamHeaderFacts, type ResponseFraming } from "./response-head.js";
import type { Transaction } from "./transaction.js";
import { sendOwnAnswer, writeWholeAnswer } from "./own-answer.js";
import { openTunnel } from "./tunnel.js";

/**
 * Head and body of a small answer go as one buffer of this size at most, a slice of Node's
 * shared pool (below 4 KiB): copying a few hundred body bytes costs less than a cork's buffered
 * entries and its writev. A larger body goes as it is, behind the head, corked.
 */
const ONE_WRITE_BYTES = 4096;

const NO_BODY = Buffer.alloc(0);

/** `head` and `body` in one buffer. */
function joined(head: Buffer, body: Buffer): Buffer {
  const both = Buffer.allocUnsafe(head.length + body.length);
  head.copy(both, 0);
  body.copy(both, head.length);
  return both;
}

/** One per request; the connection runs it in pipelining order (its Transaction), and its exchange is made with it. */
export class Http1ClientSide implements ClientSide, Transaction, ResponseWriter, ReadEndWaiter {
  readonly request: RequestHead;
  readonly #client: ClientConnection;
  #exchange!: ClientSideExchange;
  #context!: RelayContext;
  #record!: RequestRecord;
  #app!: AppSide;
  /** `Expect: 100-continue`: answered once admitted, when the body has somewhere to go (as node:http and nginx do). */
  #expectsContinue = false;
  #responseFraming: ResponseFraming = "none";
  /** The answer's status is in the record already (an intercepted 5xx, a gRPC-form error): our writer must not count its own. */
  #statusRecorded = false;
  #done = false;
  /** Set while a WebSocket tunnel is open: what ends it. */
  #cutTunnel: (() => void) | undefined;
  /** The answer's head, held until its first body bytes or the end of the app's read that brought it (see head). */
  #heldHead: Buffer | undefined;

  constructor(client: ClientConnection, request: RequestHead) {
    this.#client = client;
    this.request = request;
  }

  get remoteAddress(): string | undefined {
    return this.#client.remoteAddress;
  }

  attach(exchange: ClientSideExchange): void {
    this.#exchange = exchange;
    this.#context = exchange.context;
    this.#record = exchange.record;
    this.#app = exchange.app;
  }

  // ---- what the connection tells (Transaction) ----

  start(): void {
    this.#exchange.start();
  }

  /** A piece of the body: the parser's own copy. */
  onRequestBody(chunk: Buffer): void {
    this.#context.garbage.streamed(chunk.length);
    const app = this.#app;
    if (this.#done || !app.takesBody) return; // an HTTP/1.1 app answered already (an early 413): the rest is discarded
    this.#record.bodyReceived(chunk.length);
    if (!app.sendBody(chunk)) this.#client.pauseForBody();
  }

  onRequestEnd(): void {
    if (!this.#done) this.#app.endBody();
  }

  onClientDrain(): void {
    this.#app.resume();
  }

  onClientGone(): void {
    if (this.#done) return;
    this.#release();
    this.#record.finished(true);
    this.#context.log.debug({ method: this.request.method, url: withoutQuery(this.request.url) }, "client went away");
  }

  /** A defect of ours on the client's connection: no byte of an answer yet, a 502 of our own, and the connection ends after it; else the cut. */
  abandon(): boolean {
    if (this.#done) return false;
    this.#release();
    if (this.#app.answered || this.#client.socket.destroyed) {
      // Part of the answer went out: only a cut can say it is not all.
      this.#record.finished(false);
      return false;
    }
    const record = this.#record;
    const statusRecorded = recordGrpcFormError(record, this.request, 502);
    const writer: ResponseWriter = {
      send: (status, headers, body) => {
        if (!statusRecorded) record.responseHead(status);
        writeWholeAnswer(this.#client, this.request, status, headers, body);
      },
    };
    this.#context.errors.send(this.request, writer, 502, record.requestId);
    record.finished(false);
    return true;
  }

  // ---- what the exchange asks (ClientSide) ----

  planned(plan: Forwarding): void {
    this.#expectsContinue = expectsContinue(this.request);
    // The connection is closed after a refused upgrade: what follows must never reach the app raw.
    if (plan.upgrade !== undefined) this.#client.closeAfterAnswer();
  }

  /** Queued, perhaps for seconds: between messages (no body still coming), its connection gives the parser back. */
  queued(): void {
    this.#client.parkParser();
  }

  admitted(): void {
    if (this.#expectsContinue) this.#client.write(CONTINUE_HEAD);
  }

  answerServerOptions(): void {
    this.send(200, ["content-length", "0"], NO_BODY);
  }

  /** A proxy-made answer before any byte of the app's: `error` logged at warn; a 400 or 501 is the bare refusal, and the connection is not reused. */
  answerOwn(status: number, error: Error | undefined, reason: string, details?: ErrorDetails): void {
    const requestId = this.#record.requestId;
    if (error !== undefined) this.#context.errorLog.proxyError(this.request, requestId, status, error, reason);
    if (status === 400 || status === 501) {
      const answer = refusalAnswer(status, reason, requestId);
      this.#client.closeAfterAnswer();
      this.send(status, answer.headers, answer.body);
      return;
    }
    this.#finishWithPage(status, details);
  }

  /** Counted with the app's head already. */
  answerWithPage(status: number): void {
    this.#statusRecorded = true;
    this.#finishWithPage(status);
  }

  /**
   * An interim answer (103 Early Hints, say) goes as it comes, held back by the client's socket
   * like body bytes: an HTTP/1.0 client cannot read it, and a 100 was ours to send, on the
   * request's Expect (the app never sees it: hop-by-hop here), as for an h2 client.
   */
  interim(status: number, message: string, fields: readonly string[]): boolean {
    if (this.request.versionMinor < 1 || status === 100) return true;
    return this.#client.write(relayedResponseHead(status, message, fields, upstreamHeaderFacts(fields), "none", true));
  }

  /**
   * The app's head, framed for this client, names as the app sent them. An h2c app's answer that
   * ended with its HEADERS (`ended`) has an empty body: said as a length of 0. The head is held
   * until the first body bytes or the end of the app's read that brought it (HTTP/1.1 apps).
   */
  head(status: number, message: string, fields: readonly string[], ended: boolean): void {
    const client = this.#client;
    const request = this.request;
    const facts = upstreamHeaderFacts(fields);
    this.#responseFraming = responseFramingFor(request.method, status, facts.hasContentLength || ended, request.versionMinor);
    if (this.#responseFraming === "close") client.closeAfterAnswer();
    const octets = relayedResponseHead(status, message, fields, facts, this.#responseFraming, client.keepAlive, undefined, this.#responseFraming === "length" && !facts.hasContentLength);
    const app = this.#app;
    // A chunked answer's pieces are three writes each: corked until the read ends, as before.
    if (this.#responseFraming !== "chunked" && app.holdUntilReadEnds(this)) this.#heldHead = octets;
    else {
      app.corkClientUntilReadEnds(client.socket);
      client.write(octets);
    }
  }

  /** An HTTP/1.1 client is not sent the app's trailers (nor is one of an HTTP/1.1 app). */
  trailers(): void {}

  /** The app's read that brought the head has been parsed: a head still held (no body in that read) goes now. */
  readEnded(): void {
    this.#writeHeldHead();
  }

  /** The first body bytes: with a head held, one write for both when they are small, else the head corked before them. */
  data(chunk: Buffer): boolean {
    if (this.#done || this.#responseFraming === "none") return true;
    const held = this.#heldHead;
    const socket = this.#client.socket;
    if (held !== undefined) {
      this.#heldHead = undefined;
      if (held.length + chunk.length <= ONE_WRITE_BYTES) {
        this.#record.bodySent(chunk.length);
        return socket.write(joined(held, chunk));
      }
      this.#app.corkClientUntilReadEnds(socket);
      socket.write(held);
    }
    this.#record.bodySent(chunk.length);
    return writeBodyChunk(socket, this.#responseFraming === "chunked", chunk);
  }

  end(): void {
    this.#writeHeldHead();
    if (this.#done) return;
    const client = this.#client;
    if (this.#responseFraming === "chunked") client.write(LAST_CHUNK);
    this.#done = true;
    this.#record.finished(false);
    client.resumeForBody();
    client.responseEnded(this);
  }

  #writeHeldHead(): void {
    const held = this.#heldHead;
    if (held === undefined) return;
    this.#heldHead = undefined;
    if (!this.#done && !this.#client.socket.destroyed) this.#client.write(held);
  }

  /** Mid-body: the client's response ends abruptly so it can never look complete. */
  cut(): void {
    if (this.#done) return;
    this.#done = true;
    this.#record.finished(false);
    this.#client.destroy();
  }

  resumeBody(): void {
    if (!this.#done) this.#client.resumeForBody();
  }

  pauseBody(): void {
    this.#client.pauseForBody();
  }

  switchedProtocols(status: number, message: string, fields: readonly string[]): void {
    this.#client.write(switchingProtocolsHead(status, message, fields));
  }

  /** A WebSocket is open: no longer in flight, but it holds its concurrency slot until it closes. */
  tunnel(upstreamSocket: Socket, rest: Buffer): void {
    this.#done = true;
    const record = this.#record;
    record.ended();
    record.tunnelOpened();
    const clientRest = this.#client.detach();
    this.#cutTunnel = openTunnel(this.#client.socket, upstreamSocket, clientRest, rest, this.#context.observer, () => record.finished(false), this.#context.reportFault, this.#context.deadlines && record);
  }

  /**
   * --idle-timeout or --max-request-duration (CONTRACT §15, the rule in stream-deadlines.ts):
   * past the duration with no byte of an answer sent, a 504 (the record logs the deadline's
   * line); otherwise the client's connection closes and the answer is cut, so it can never look
   * complete. A tunnel's deadline closes both its sockets.
   */
  endForDeadline(kind: DeadlineKind): void {
    if (this.#cutTunnel !== undefined) return this.#cutTunnel();
    if (this.#done) return;
    const answerBegun = this.#app.answered;
    this.#release();
    if (kind === "duration" && !answerBegun && !this.#client.socket.destroyed) {
      // The rest of the request body, if any, must not be read as a next request.
      this.#client.closeAfterAnswer();
      this.#finishWithPage(504);
      return;
    }
    this.#record.finished(false);
    this.#client.destroy();
  }

  /** A defect of ours in one of the app side's callbacks: this request's, handled by its client connection's fault boundary. */
  fault(error: unknown): void {
    this.#client.fault(error);
  }

  #release(): void {
    this.#done = true;
    this.#exchange.release();
  }

  #finishWithPage(status: number, details?: ErrorDetails): void {
    if (recordGrpcFormError(this.#record, this.request, status)) this.#statusRecorded = true;
    this.#context.errors.send(this.request, this, status, this.#record.requestId, details);
  }

  /** Writes a whole answer of our own (through the error pages, or directly) and finishes the exchange; the app is not asked (again). */
  send(status: number, headers: readonly string[], body: Buffer): void {
    this.#done = true;
    this.#app.cancel();
    // An intercepted 5xx was counted when the app's head came; the page keeps its status.
    sendOwnAnswer(this.#client, this, this.request, this.#record, this.#statusRecorded, { status, headers, body });
  }
}
