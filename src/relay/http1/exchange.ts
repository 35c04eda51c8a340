// One proxied request and its answer: admitted by the limiter, the head sent once, bodies relayed as bytes with backpressure both ways, failures mapped to 502/504 or an abrupt end.
import type { Socket } from "node:net";
import type { ErrorDetails } from "../../http/error-response.js";
import { upstreamErrorReason } from "../../http/proxy-observer.js";
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
import type { RequestBodyFraming } from "./forwarded-request-head.js";
import { planForward } from "./forward-plan.js";
import { BODY, type BodyDirective, type ParsedHead } from "./llhttp-binding.js";
import type { RequestHead } from "./request-head.js";
import { HeldRequestBody } from "./held-request-body.js";
import { CONTINUE_HEAD, relayInterimHead, switchingProtocolsHead, unaskedSwitch } from "./interim-responses.js";
import { relayedResponseHead, upstreamHeaderFacts, type ResponseFraming } from "./response-head.js";
import { canBeSentAgain, closedUnderUs } from "./retry-policy.js";
import type { Transaction } from "./transaction.js";
import { sendOwnAnswer, writeWholeAnswer } from "./own-answer.js";
import { openTunnel } from "./tunnel.js";
import type { UpstreamConnection, UpstreamOwner } from "./upstream-connection.js";
import type { UpstreamPool } from "./upstream-pool.js";
import { HEAD_TIMEOUT_CODE, type UpstreamFailure } from "../upstream-failure.js";
import { interceptsUpstreamError, logInterceptedError } from "../upstream-error-page.js";
import { MAX_INTERIM_HEADS, tooManyInterimHeads } from "../interim-limit.js";

/** One request/response through the relay; methods on the prototype, one object per request. */
export class Exchange implements Transaction, UpstreamOwner, AdmissionCandidate, ResponseWriter, DeadlineTarget {
  readonly #context: RelayContext;
  readonly #pool: UpstreamPool;
  readonly #client: ClientConnection;
  readonly #request: RequestHead;
  readonly #record: RequestRecord;
  #upstream: UpstreamConnection | undefined;
  #queued: QueuedRequest | undefined;
  #headText = "";
  #framing: RequestBodyFraming = "none";
  #expectsContinue = false;
  /** Request body that came before the upstream connection was ready. */
  #heldBody: HeldRequestBody | undefined;
  #upgrade: "websocket" | "other" | undefined;
  #requestEnded = false;
  /** The whole request (head, body, last chunk) has been written upstream. */
  #requestSent = false;
  #responseFraming: ResponseFraming = "none";
  #responseStarted = false;
  /** The answer's status is in the record already (an intercepted 5xx, a gRPC-form error): our writer must not count its own. */
  #statusRecorded = false;
  #interimHeads = 0;
  #retried = false;
  #done = false;
  /** Set while a WebSocket tunnel is open: what ends it. */
  #cutTunnel: (() => void) | undefined;

  constructor(context: RelayContext, pool: UpstreamPool, client: ClientConnection, request: RequestHead) {
    this.#context = context;
    this.#pool = pool;
    this.#client = client;
    this.#request = request;
    this.#record = new RequestRecord(context, request, client.remoteAddress);
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
    this.#headText = plan.head.text;
    this.#framing = plan.head.framing;
    this.#upgrade = plan.upgrade;
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
      this.#sendOn();
    } catch (error) {
      this.#client.fault(error);
    }
  }

  #sendOn(): void {
    // Answered here, as node:http and nginx do, once the body has somewhere to go.
    if (this.#expectsContinue) this.#client.write(CONTINUE_HEAD);
    this.#connect();
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

  #connect(): void {
    const pool = this.#pool;
    const upstream = this.#upgrade !== undefined ? pool.acquireFresh(this) : pool.acquire(this, this.#resendable());
    this.#upstream = upstream;
    if (upstream.connected) this.#sendHead();
    else {
      // A connect that hangs (a black-holed address) counts against the head's deadline too.
      this.#record.awaitingHead(true);
      upstream.awaitHead(this.#context.responseHeaderTimeoutMs);
    }
  }

  onConnected(): void {
    this.#sendHead();
  }

  /** Head, the body read so far and, for a request already read whole, its end: one write. */
  #sendHead(): void {
    const upstream = this.#upstream!;
    upstream.socket.cork();
    upstream.write(this.#headText);
    this.#heldBody?.writeTo(upstream.socket, this.#framing === "chunked");
    this.#heldBody = undefined;
    if (this.#requestEnded) this.#sendRequestEnd(upstream);
    else this.#record.awaitingHead(false);
    upstream.socket.uncork();
    this.#client.resumeForBody();
  }

  onRequestBody(chunk: Buffer): void {
    this.#context.garbage.streamed(chunk.length);
    if (this.#done || this.#responseStarted) return; // answered already (an early 413): the rest is discarded
    this.#record.bodyReceived(chunk.length);
    const upstream = this.#upstream;
    if (upstream === undefined || !upstream.connected) {
      if ((this.#heldBody ??= new HeldRequestBody()).hold(chunk)) this.#client.pauseForBody();
      return;
    }
    if (!writeBodyChunk(upstream.socket, this.#framing === "chunked", chunk)) this.#client.pauseForBody();
  }

  onRequestEnd(): void {
    this.#requestEnded = true;
    const upstream = this.#upstream;
    if (!this.#done && upstream !== undefined && upstream.connected && !this.#requestSent) this.#sendRequestEnd(upstream);
  }

  /** The request is all upstream: the response head timeout starts (time spent uploading does not count). */
  #sendRequestEnd(upstream: UpstreamConnection): void {
    if (this.#framing === "chunked") upstream.write(LAST_CHUNK);
    this.#requestSent = true;
    this.#record.requestSent();
    upstream.awaitHead(this.#context.responseHeaderTimeoutMs);
  }

  onUpstreamDrain(): void {
    this.#client.resumeForBody();
  }

  onClientDrain(): void {
    this.#upstream?.resumeReading();
  }

  onResponseHead(head: ParsedHead): BodyDirective {
    const status = head.statusCode;
    const client = this.#client;
    if (status < 200 && status !== 101) return this.#onInterimHead(head);
    if (status === 101) return this.#onSwitchingProtocols(head);
    const method = this.#request.method;
    this.#record.upstreamHead(status);
    if (interceptsUpstreamError(this.#context, this.#request, status)) return this.#interceptError(status);
    const facts = upstreamHeaderFacts(head.headers);
    this.#responseFraming = responseFramingFor(method, status, facts.hasContentLength, this.#request.versionMinor);
    if (this.#responseFraming === "close") client.closeAfterAnswer();
    this.#responseStarted = true;
    this.#upstream?.corkClientUntilReadEnds(client.socket);
    client.write(relayedResponseHead(status, head.statusMessage, head.headers, facts, this.#responseFraming, client.keepAlive));
    return method === "HEAD" ? BODY.skip : BODY.parse;
  }

  /** An upstream 5xx replaced by the branded page (upstream-error-page.ts): the connection, mid-body, is not reused. */
  #interceptError(status: number): BodyDirective {
    const upstream = this.#upstream;
    this.#upstream = undefined;
    upstream?.destroy();
    this.#statusRecorded = true;
    const requestId = this.#record.requestId;
    logInterceptedError(this.#context, this.#request, requestId, status);
    this.#finishWithPage(status, requestId);
    return BODY.skip;
  }

  /** Interim answers (100 Continue, 103 Early Hints) are relayed as they come, and only so many: a flood of them is a 502. */
  #onInterimHead(head: ParsedHead): BodyDirective {
    if (++this.#interimHeads > MAX_INTERIM_HEADS) return this.#failOnHead(tooManyInterimHeads(), "upstream unavailable");
    if (!relayInterimHead(this.#client, this.#request, head)) this.#upstream?.pauseReading();
    return BODY.parse;
  }

  /** Only a 101 to the WebSocket asked for becomes a tunnel; anything else is a 502, never a raw pipe. */
  #onSwitchingProtocols(head: ParsedHead): BodyDirective {
    const unasked = unaskedSwitch(this.#upgrade, head);
    if (unasked !== undefined) return this.#failOnHead(new Error(`upstream switched to ${JSON.stringify(unasked)}`), "upstream switched to a protocol that was not asked for");
    this.#record.upstreamHead(101);
    this.#client.write(switchingProtocolsHead(head));
    return BODY.upgrade;
  }

  /** A head the client must not get: the upstream connection is dropped and the answer is a 502. */
  #failOnHead(error: Error, reason: string): BodyDirective {
    const upstream = this.#upstream;
    this.#upstream = undefined;
    upstream?.destroy();
    this.#failBeforeHead(502, error, reason);
    return BODY.skip;
  }

  /** A WebSocket is open: no longer in flight, but it holds its concurrency slot until it closes. */
  onTunnel(upstreamSocket: Socket, rest: Buffer): void {
    this.#done = true;
    this.#upstream = undefined;
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
    const answerBegun = this.#responseStarted;
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

  onResponseBody(chunk: Buffer): void {
    this.#context.garbage.streamed(chunk.length);
    if (this.#done) return;
    const client = this.#client;
    this.#record.bodySent(chunk.length);
    if (!writeBodyChunk(client.socket, this.#responseFraming === "chunked", chunk)) this.#upstream?.pauseReading();
  }

  onResponseEnd(keepAlive: boolean): void {
    const upstream = this.#upstream;
    this.#upstream = undefined;
    if (upstream !== undefined) this.#pool.release(upstream, keepAlive && this.#requestSent && !this.#done);
    if (this.#done) return;
    if (this.#responseFraming === "chunked") this.#client.write(LAST_CHUNK);
    this.#done = true;
    this.#record.finished(false);
    this.#client.resumeForBody();
    this.#client.responseEnded(this);
  }

  onUpstreamFailure(failure: UpstreamFailure): void {
    const upstream = this.#upstream;
    this.#upstream = undefined;
    if (this.#done) return;
    if (!this.#responseStarted) {
      if (upstream !== undefined && this.#shouldRetry(upstream, failure.code)) {
        this.#retried = true;
        this.#requestSent = false;
        this.#connect();
        return;
      }
      const timedOut = failure.code === HEAD_TIMEOUT_CODE;
      this.#context.observer.upstreamError(upstreamErrorReason(failure.code));
      this.#failBeforeHead(timedOut ? 504 : 502, failure, timedOut ? "upstream response head timed out" : "upstream unavailable");
      return;
    }
    // Mid-body: end the client's response abruptly so it can never look complete.
    this.#context.errorLog.warn("upstream failed mid-response", { method: this.#request.method, url: withoutQuery(this.#request.url), code: failure.code, err: failure.message });
    this.#done = true;
    this.#record.finished(false);
    this.#client.destroy();
  }

  /** A defect in a callback of our upstream connection: this request's, handled by its client connection's boundary. */
  onInternalFault(error: unknown): void {
    this.#client.fault(error);
  }

  abandon(): boolean {
    if (this.#done) return false;
    this.#release();
    if (this.#responseStarted || this.#client.socket.destroyed) {
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

  /** Ended from outside (the client gone, a fault): it leaves the queue, or its upstream connection is dropped mid-exchange. */
  #release(): void {
    this.#done = true;
    if (this.#queued !== undefined) this.#record.leftQueue(this.#queued);
    this.#queued = undefined;
    const upstream = this.#upstream;
    this.#upstream = undefined;
    upstream?.destroy();
  }

  /**
   * One retry, for an idempotent request without a body whose connection was closed or reset
   * before any byte of an answer: the app's idle close racing our reuse, most often.
   */
  #shouldRetry(upstream: UpstreamConnection, code: string): boolean {
    return this.#resendable() && upstream.unanswered && closedUnderUs(code);
  }

  /** Not tried again yet, and safe to send again (retry-policy.ts). */
  #resendable(): boolean {
    return !this.#retried && canBeSentAgain(this.#request.method, this.#framing, this.#upgrade !== undefined);
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
