// One proxied request and its answer: admitted by the limiter, the client's side here (the head planned, bodies relayed as bytes with backpressure, our own answers), the app's in http1-app-side.ts.
import type { Socket } from "node:net";
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
import { LAST_CHUNK, responseFramingFor, writeBodyChunk } from "./body-framing.js";
import type { ClientConnection } from "./client-connection.js";
import { planForward } from "./forward-plan.js";
import { Http1AppSide, type Http1AppUser, type Http1SendRules } from "./http1-app-side.js";
import { BODY, type BodyDirective, type ParsedHead } from "./llhttp-binding.js";
import type { RequestHead } from "./request-head.js";
import { CONTINUE_HEAD, relayInterimHead, switchingProtocolsHead } from "./interim-responses.js";
import { relayedResponseHead, upstreamHeaderFacts, type ResponseFraming } from "./response-head.js";
import type { Transaction } from "./transaction.js";
import { sendOwnAnswer, writeWholeAnswer } from "./own-answer.js";
import { openTunnel } from "./tunnel.js";
import type { UpstreamPool } from "./upstream-pool.js";

/** An HTTP/1.1 client's body is checked by llhttp as it is read, so its last byte goes as it comes; an idempotent request may go again. */
const HTTP1_CLIENT_RULES: Http1SendRules = { mayResend: true, holdLastByte: false };

/** One request/response through the relay; methods on the prototype, one object per request. */
export class Exchange implements Transaction, Http1AppUser, AdmissionCandidate, ResponseWriter, DeadlineTarget {
  readonly #context: RelayContext;
  readonly #client: ClientConnection;
  readonly #request: RequestHead;
  readonly #record: RequestRecord;
  readonly #app: Http1AppSide;
  #queued: QueuedRequest | undefined;
  #expectsContinue = false;
  #responseFraming: ResponseFraming = "none";
  /** The answer's status is in the record already (an intercepted 5xx, a gRPC-form error): our writer must not count its own. */
  #statusRecorded = false;
  #done = false;
  /** Set while a WebSocket tunnel is open: what ends it. */
  #cutTunnel: (() => void) | undefined;

  constructor(context: RelayContext, pool: UpstreamPool, client: ClientConnection, request: RequestHead) {
    this.#context = context;
    this.#client = client;
    this.#request = request;
    this.#record = new RequestRecord(context, request, client.remoteAddress);
    this.#app = new Http1AppSide(context, pool, request, this.#record, HTTP1_CLIENT_RULES, this);
  }

  start(): void {
    const plan = planForward(this.#request, this.#context, this.#client.remoteAddress);
    if (plan.kind === "server options") {
      this.send(200, ["content-length", "0"], Buffer.alloc(0));
      return;
    }
    if (plan.kind === "refuse") {
      this.#failBeforeHead(plan.status, new Error(plan.detail), plan.reason);
      return;
    }
    this.#app.forward(plan.head, plan.upgrade);
    this.#expectsContinue = plan.expectsContinue;
    // The connection is closed after a refused upgrade: what follows must never reach the app raw.
    if (plan.upgrade !== undefined) this.#client.closeAfterAnswer();
    this.#queued = requestAdmission(this.#context, this);
    // Queued, perhaps for seconds: between messages (no body still coming), its connection gives the parser back.
    if (this.#queued !== undefined) this.#client.parkParser();
  }

  /**
   * A slot is ours (at once, or after `waitedMs` in the queue): the request goes to the app.
   * The limiter calls this from another request's release or its queue timer: a fault here is
   * this request's, and must not break the limiter's loop.
   */
  admitted(waitedMs: number | undefined): void {
    this.#queued = undefined;
    // First: the slot is this request's to release, whatever fails after.
    this.#record.admitted(waitedMs !== undefined, waitedMs, this);
    try {
      faultAt("limiter admit");
      // Answered here, as node:http and nginx do, once the body has somewhere to go.
      if (this.#expectsContinue) this.#client.write(CONTINUE_HEAD);
      this.#app.open();
    } catch (error) {
      this.#client.fault(error);
    }
  }

  /** The queue's wait ran out (or the drain's did): the app never sees the request. */
  rejected(_reason: "queue_timeout", waitedMs: number): void {
    this.#queued = undefined;
    try {
      this.refuseOverloaded("queue timeout", waitedMs);
    } catch (error) {
      this.#client.fault(error);
    }
  }

  refuseOverloaded(reason: OverloadReason, waitedMs: number): void {
    recordOverloaded(this.#context, this.#record, this.#request, reason, waitedMs);
    this.#finishWithPage(503, this.#record.requestId, OVERLOADED);
  }

  onRequestBody(chunk: Buffer): void {
    this.#context.garbage.streamed(chunk.length);
    const app = this.#app;
    if (this.#done || app.answered) return; // answered already (an early 413): the rest is discarded
    this.#record.bodyReceived(chunk.length);
    if (!app.sendBody(chunk, true)) this.#client.pauseForBody(); // the parser's own copy
  }

  onRequestEnd(): void {
    if (!this.#done) this.#app.endBody();
  }

  resumeBody(): void {
    this.#client.resumeForBody();
  }

  onClientDrain(): void {
    this.#app.resume();
  }

  interim(head: ParsedHead): boolean {
    return relayInterimHead(this.#client, this.#request, head);
  }

  switchedProtocols(head: ParsedHead): void {
    this.#client.write(switchingProtocolsHead(head));
  }

  head(head: ParsedHead): BodyDirective {
    const status = head.statusCode;
    const client = this.#client;
    const method = this.#request.method;
    const facts = upstreamHeaderFacts(head.headers);
    this.#responseFraming = responseFramingFor(method, status, facts.hasContentLength, this.#request.versionMinor);
    if (this.#responseFraming === "close") client.closeAfterAnswer();
    this.#app.corkClientUntilReadEnds(client.socket);
    client.write(relayedResponseHead(status, head.statusMessage, head.headers, facts, this.#responseFraming, client.keepAlive));
    return method === "HEAD" ? BODY.skip : BODY.parse;
  }

  /** An upstream 5xx replaced by the branded page (upstream-error-page.ts), with the app's status. */
  interceptError(status: number): void {
    this.#statusRecorded = true;
    this.#finishWithPage(status, this.#record.requestId);
  }

  /** A WebSocket is open: no longer in flight, but it holds its concurrency slot until it closes. */
  tunnel(upstreamSocket: Socket, rest: Buffer): void {
    this.#done = true;
    this.#record.ended();
    this.#record.tunnelOpened();
    const clientRest = this.#client.detach();
    const record = this.#record;
    this.#cutTunnel = openTunnel(this.#client.socket, upstreamSocket, clientRest, rest, this.#context.observer, () => record.finished(false), this.#context.reportFault, this.#context.deadlines && record);
  }

  /**
   * --idle-timeout or --max-request-duration (CONTRACT §15, the rule in stream-deadlines.ts):
   * past the duration with no byte of an answer sent, a 504; otherwise both connections close
   * and the answer is cut, so it can never look complete.
   */
  endForDeadline(kind: DeadlineKind): void {
    if (this.#cutTunnel !== undefined) return this.#cutTunnel();
    if (this.#done) return;
    const answerBegun = this.#app.answered;
    this.#release();
    if (kind === "duration" && !answerBegun && !this.#client.socket.destroyed) {
      // The rest of the request body, if any, must not be read as a next request.
      this.#client.closeAfterAnswer();
      this.#finishWithPage(504, this.#record.requestId);
      return;
    }
    this.#record.finished(false);
    this.#client.destroy();
  }

  data(chunk: Buffer): boolean {
    if (this.#done) return true;
    this.#record.bodySent(chunk.length);
    return writeBodyChunk(this.#client.socket, this.#responseFraming === "chunked", chunk);
  }

  end(): void {
    if (this.#done) return;
    if (this.#responseFraming === "chunked") this.#client.write(LAST_CHUNK);
    this.#done = true;
    this.#record.finished(false);
    this.#client.resumeForBody();
    this.#client.responseEnded(this);
  }

  failBeforeHead(status: number, error: Error, reason: string): void {
    this.#failBeforeHead(status, error, reason);
  }

  /** Mid-body: the client's response ends abruptly so it can never look complete. */
  answerCut(): void {
    this.#done = true;
    this.#record.finished(false);
    this.#client.destroy();
  }

  /** A defect in a callback of our upstream connection: this request's, handled by its client connection's boundary. */
  fault(error: unknown): void {
    this.#client.fault(error);
  }

  abandon(): boolean {
    if (this.#done) return false;
    this.#release();
    if (this.#app.answered || this.#client.socket.destroyed) {
      // Part of the answer went out: only a cut can say it is not all.
      this.#record.finished(false);
      return false;
    }
    // No byte of an answer yet: a 502 of our own (JSON or page), and the connection ends after it.
    const statusRecorded = recordGrpcFormError(this.#record, this.#request, 502);
    const writer: ResponseWriter = {
      send: (status, headers, body) => {
        if (!statusRecorded) this.#record.responseHead(status);
        writeWholeAnswer(this.#client, this.#request, status, headers, body);
      },
    };
    this.#context.errors.send(this.#request, writer, 502, this.#record.requestId);
    this.#record.finished(false);
    return true;
  }

  onClientGone(): void {
    if (this.#done) return;
    this.#release();
    this.#record.finished(true);
    this.#context.log.debug({ method: this.#request.method, url: withoutQuery(this.#request.url) }, "client went away");
  }

  /** Ended from outside (the client gone, a fault): it leaves the queue, or its app connection is dropped mid-exchange. */
  #release(): void {
    this.#done = true;
    if (this.#queued !== undefined) this.#record.leftQueue(this.#queued);
    this.#queued = undefined;
    this.#app.cancel();
  }

  /** A proxy-made error before any byte of the answer was sent, logged at warn. */
  #failBeforeHead(status: number, error: Error, reason: string): void {
    const requestId = this.#record.requestId;
    this.#context.errorLog.proxyError(this.#request, requestId, status, error, reason);
    if (status === 400 || status === 501) {
      // The client's request cannot be forwarded, and the connection is not reused.
      const answer = refusalAnswer(status, reason, requestId);
      this.#client.closeAfterAnswer();
      this.send(status, answer.headers, answer.body);
      return;
    }
    this.#finishWithPage(status, requestId);
  }

  #finishWithPage(status: number, requestId: string, details?: ErrorDetails): void {
    if (recordGrpcFormError(this.#record, this.#request, status)) this.#statusRecorded = true;
    this.#context.errors.send(this.#request, this, status, requestId, details);
  }

  /** Writes a whole answer of our own (through the error pages, or directly) and finishes the exchange. */
  send(status: number, headers: readonly string[], body: Buffer): void {
    this.#done = true;
    // An intercepted 5xx was counted when the upstream's head came; the page keeps its status.
    sendOwnAnswer(this.#client, this, this.#request, this.#record, this.#statusRecorded, { status, headers, body });
  }
}
