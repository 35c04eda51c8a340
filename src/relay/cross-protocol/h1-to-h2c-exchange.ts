// One HTTP/1.1 request relayed to an h2c app on a stream of the h2c pool (--upstream-protocol h2c): the HTTP/1.1 codec's Transaction on the client side, an h2 stream on the app's.
import { headerObject, sendsAgain, type AppStream } from "../http2/app-stream.js";
import { SentBody } from "../http2/sent-body.js";
import type { H2Connection } from "../../h2-codec/h2-connection.js";
import { fieldValue } from "../../h2-codec/field-list.js";
import { withoutQuery } from "../../access-log/access-log.js";
import { upstreamErrorReason } from "../../http/proxy-observer.js";
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
import { HEAD_TIMEOUT_CODE } from "../upstream-failure.js";
import { interceptsUpstreamError, logInterceptedError } from "../upstream-error-page.js";
import { MAX_INTERIM_HEADS, tooManyInterimHeads } from "../interim-limit.js";
import { h1ToH2cFields } from "./h1-to-h2c-fields.js";
import type { H2cPool, H2cSessionUser } from "../http2/h2c-pool.js";
import { withinBoundary } from "../fault-injection.js";

/** How much request body is held while queued or connecting before reading stops (as the HTTP/1.1 exchange). */
const HELD_BODY_BYTES = 64 * 1024;

/** One per request; the connection runs it in pipelining order like any Transaction. */
export class H1ToH2cExchange implements Transaction, AdmissionCandidate, H2cSessionUser, ResponseWriter, DeadlineTarget {
  readonly #context: RelayContext;
  readonly #pool: H2cPool;
  readonly #client: ClientConnection;
  readonly #request: RequestHead;
  readonly #record: RequestRecord;
  /** The app's request head, the codec's flat list. */
  #fields: string[] | undefined;
  #queued: QueuedRequest | undefined;
  #session: H2Connection | undefined;
  #upstream: AppStream | undefined;
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #requestEnded = false;
  #headTimer: NodeJS.Timeout | undefined;
  #framing: ResponseFraming = "none";
  #responseStarted = false;
  /** What went to the app of the body, kept to send again; made at the first piece. */
  #sentBody: SentBody | undefined;
  #retried = false;
  #interimHeads = 0;
  /** A gRPC-form error's status is in the record already: our writer must not count its 200. */
  #statusRecorded = false;
  /** In the pool's waiters: a session is still to come. */
  #waitingForSession = false;
  #done = false;
  /** A defect of ours in one of the app stream's callbacks (behind its port's fault boundary): the client connection's fault boundary ends this request. */
  readonly #fault = (error: unknown): void => this.#client.fault(error);

  constructor(context: RelayContext, pool: H2cPool, client: ClientConnection, request: RequestHead) {
    this.#context = context;
    this.#pool = pool;
    this.#client = client;
    this.#request = request;
    this.#record = new RequestRecord(context, request, client.remoteAddress);
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
    // The head's deadline runs from here, the connection's setup included (an app that accepts
    // and never sends SETTINGS gets its 504 like one that never answers).
    this.#awaitHead();
    this.#acquireSession();
  }

  #acquireSession(): void {
    this.#waitingForSession = true;
    this.#pool.acquire(this);
  }

  /** Out of the pool's waiters, if still there: a request that ended never takes a session. */
  #stopWaiting(): void {
    if (!this.#waitingForSession) return;
    this.#waitingForSession = false;
    this.#pool.forget(this);
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

  onSession(session: H2Connection): void {
    this.#waitingForSession = false;
    if (this.#done) return this.#pool.release(session);
    this.#session = session;
    const endStream = this.#requestEnded && this.#pendingBytes === 0;
    const upstream = this.#pool.request(session, this.#fields!, endStream);
    this.#upstream = upstream;
    upstream.onResponse = (fields, ended) => this.#onResponse(fields, ended);
    upstream.onInterim = (fields) => this.#onInterim(fields);
    upstream.onData = (chunk) => this.#onData(chunk);
    upstream.onEnd = () => this.#onEnd();
    upstream.onDrain = () => this.#client.resumeForBody();
    upstream.onClose = () => this.#onClose();
    upstream.onFault = this.#fault;
    for (const chunk of this.#pending) {
      upstream.write(chunk);
      (this.#sentBody ??= new SentBody()).sent(chunk, true);
    }
    this.#pending = [];
    this.#pendingBytes = 0;
    if (this.#requestEnded) {
      if (!endStream) upstream.end();
    } else {
      // The rest of the body goes now: upload time does not count, the deadline starts again at its
      // end, and meanwhile --idle-timeout rules (as for an HTTP/1.1 upload).
      clearTimeout(this.#headTimer);
      this.#headTimer = undefined;
      this.#record.awaitingHead(false);
    }
    this.#client.resumeForBody();
  }

  onSessionFailure(error: Error & { code?: string }): void {
    this.#waitingForSession = false;
    if (this.#done) return;
    const reason = upstreamErrorReason(error.code);
    this.#context.observer.upstreamError(reason);
    if (reason === "timeout") this.#fail(504, error, "upstream response head timed out");
    else this.#fail(502, error, "upstream unavailable");
  }

  onRequestBody(chunk: Buffer): void {
    this.#context.garbage.streamed(chunk.length);
    if (this.#done || this.#responseStarted && this.#upstream === undefined) return;
    this.#record.bodyReceived(chunk.length);
    const upstream = this.#upstream;
    if (upstream === undefined) {
      this.#pending.push(chunk);
      this.#pendingBytes += chunk.length;
      if (this.#pendingBytes > HELD_BODY_BYTES) this.#client.pauseForBody();
      return;
    }
    (this.#sentBody ??= new SentBody()).sent(chunk, true);
    if (!upstream.write(chunk)) this.#client.pauseForBody();
  }

  onRequestEnd(): void {
    this.#requestEnded = true;
    const upstream = this.#upstream;
    if (upstream === undefined || this.#done) return;
    upstream.end();
    this.#awaitHead();
  }

  onClientDrain(): void {
    this.#upstream?.resume();
  }

  #awaitHead(): void {
    this.#record.requestSent();
    this.#headTimer ??= setTimeout(() => withinBoundary("timer", () => this.#headTimedOut(), this.#fault), this.#context.responseHeaderTimeoutMs).unref();
  }

  #headTimedOut(): void {
    this.#headTimer = undefined;
    if (this.#responseStarted || this.#done) return;
    this.#stopWaiting();
    const upstream = this.#upstream;
    this.#detach();
    upstream?.reset(true);
    this.#context.observer.upstreamError("timeout");
    this.#fail(504, Object.assign(new Error("upstream response head timed out"), { code: HEAD_TIMEOUT_CODE }), "upstream response head timed out");
  }

  /**
   * An interim answer (103 Early Hints, say) goes to an HTTP/1.1 client as it comes, held back by
   * its socket like body bytes (an HTTP/1.0 one cannot read it; a 100 was ours to send, on the
   * request's Expect); past the limit the app is failing: a 502.
   */
  #onInterim(fields: readonly string[]): void {
    if (this.#done || this.#responseStarted) return;
    if (++this.#interimHeads > MAX_INTERIM_HEADS) {
      const upstream = this.#upstream;
      this.#detach();
      upstream?.reset(true);
      return this.#fail(502, tooManyInterimHeads(), "upstream unavailable");
    }
    const status = Number(fields[1]);
    if (status === 100 || this.#request.versionMinor < 1) return;
    if (!this.#client.write(relayedResponseHead(status, "", http1Fields(fields), { hasContentLength: true, hasDate: true }, "none", true))) this.#upstream?.pause();
  }

  /** The app's head (the codec's flat list) as HTTP/1.1 (http1Fields), framed for this client. */
  #onResponse(fields: readonly string[], ended: boolean): void {
    clearTimeout(this.#headTimer);
    if (this.#done) return;
    const status = Number(fields[1]);
    this.#record.upstreamHead(status);
    this.#sentBody?.letGo();
    if (interceptsUpstreamError(this.#context, this.#request, status)) return this.#interceptError(status);
    const flat = http1Fields(fields);
    const hasContentLength = fieldValue(fields, "content-length") !== undefined;
    // An h2 answer that ended with its HEADERS (`ended`) has an empty body: said as a length of 0.
    this.#framing = responseFramingFor(this.#request.method, status, hasContentLength || ended, this.#request.versionMinor);
    if (this.#framing === "length" && !hasContentLength) flat.push("content-length", "0");
    else if (this.#framing === "close") this.#client.closeAfterAnswer();
    this.#responseStarted = true;
    this.#client.write(relayedResponseHead(status, "", flat, { hasContentLength: true, hasDate: fieldValue(fields, "date") !== undefined }, this.#framing, this.#client.keepAlive));
  }

  /** An app's 5xx replaced by the branded page (upstream-error-page.ts): its stream is reset, its body never read. */
  #interceptError(status: number): void {
    const upstream = this.#upstream;
    this.#detach();
    upstream?.reset(true);
    // Counted with the app's head; the page keeps its status.
    this.#statusRecorded = true;
    const requestId = this.#record.requestId;
    logInterceptedError(this.#context, this.#request, requestId, status);
    this.#context.errors.send(this.#request, this, status, requestId);
  }

  #onData(chunk: Buffer): void {
    this.#context.garbage.streamed(chunk.length);
    if (this.#done || this.#framing === "none") return;
    this.#record.bodySent(chunk.length);
    if (!writeBodyChunk(this.#client.socket, this.#framing === "chunked", chunk)) this.#upstream?.pause();
  }

  #onEnd(): void {
    if (this.#done || !this.#responseStarted) return;
    if (this.#framing === "chunked") this.#client.write(LAST_CHUNK);
    this.#done = true;
    this.#record.finished(false);
    this.#client.resumeForBody();
    this.#client.responseEnded(this);
  }

  #onClose(): void {
    const upstream = this.#upstream;
    this.#detach();
    if (this.#done || upstream === undefined) return;
    if (sendsAgain(upstream.rstCode, this.#responseStarted, this.#retried, this.#sentBody?.lost ?? false)) {
      this.#retried = true;
      // What was sent goes first on the new stream, before what came since.
      const sent = this.#sentBody?.take();
      if (sent !== undefined && sent.length > 0) {
        this.#pending.unshift(sent);
        this.#pendingBytes += sent.length;
      }
      this.#acquireSession();
      return;
    }
    if (!this.#responseStarted) {
      this.#context.observer.upstreamError("reset");
      return this.#fail(502, Object.assign(new Error(`upstream stream closed (code ${upstream.rstCode})`), { code: "ECONNRESET" }), "upstream unavailable");
    }
    // Mid-body: the client's response ends abruptly so it can never look complete.
    this.#context.errorLog.warn("upstream failed mid-response", { method: this.#request.method, url: withoutQuery(this.#request.url), code: `RST_STREAM ${upstream.rstCode}` });
    this.#done = true;
    this.#record.finished(false);
    this.#client.destroy();
  }

  /** CONTRACT §15 (stream-deadlines.ts): the app's stream gets RST_STREAM CANCEL; the client a 504 when nothing was answered yet, else the cut. */
  endForDeadline(kind: DeadlineKind): void {
    if (this.#done) return;
    const answerBegun = this.#responseStarted;
    const upstream = this.#upstream;
    this.#detach();
    upstream?.reset(true);
    if (kind === "duration" && !answerBegun) {
      this.#client.closeAfterAnswer();
      return this.#fail(504, new Error("max request duration reached"), "max request duration reached");
    }
    this.#done = true;
    clearTimeout(this.#headTimer);
    this.#record.finished(false);
    this.#client.destroy();
  }

  /** A defect of ours on the client's connection: released as if the client had gone (its connection is cut). */
  abandon(): boolean {
    this.onClientGone();
    return false;
  }

  onClientGone(): void {
    if (this.#done) return;
    this.#done = true;
    clearTimeout(this.#headTimer);
    if (this.#queued !== undefined) this.#record.leftQueue(this.#queued);
    this.#queued = undefined;
    this.#stopWaiting();
    const upstream = this.#upstream;
    this.#detach();
    upstream?.reset(true);
    this.#record.finished(true);
  }

  #detach(): void {
    const session = this.#session;
    this.#session = undefined;
    this.#upstream = undefined;
    if (session !== undefined) this.#pool.release(session);
  }

  #refuse(status: 400 | 501, reason: string): void {
    const requestId = this.#record.requestId;
    this.#context.errorLog.proxyError(this.#request, requestId, status, new Error(reason), reason);
    const answer = refusalAnswer(status, reason, requestId);
    this.#client.closeAfterAnswer();
    this.send(status, answer.headers, answer.body);
  }

  #fail(status: number, error: Error, reason: string): void {
    clearTimeout(this.#headTimer);
    this.#context.errorLog.proxyError(this.#request, this.#record.requestId, status, error, reason);
    this.#statusRecorded = recordGrpcFormError(this.#record, this.#request, status);
    this.#context.errors.send(this.#request, this, status, this.#record.requestId);
  }

  /** A whole answer of our own, which finishes the exchange. */
  send(status: number, headers: readonly string[], body: Buffer): void {
    this.#done = true;
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
