// One h2 stream relayed to an h2c app on a stream of its own: admitted by the limiter, bodies moved with each side's flow control, trailers and resets carried both ways.
import { sendsAgain, type AppStream } from "./app-stream.js";
import { SentBody } from "./sent-body.js";
import type { H2Connection } from "../../h2-codec/h2-connection.js";
import { upstreamErrorReason } from "../../http/proxy-observer.js";
import type { QueuedRequest } from "../../overload/concurrency-limiter.js";
import { OVERLOADED, recordOverloaded, requestAdmission, type AdmissionCandidate, type OverloadReason } from "../admission.js";
import { clientAddressOf } from "../client-address.js";
import type { RelayContext } from "../relay-context.js";
import { RequestRecord, type DeadlineTarget } from "../request-record.js";
import type { DeadlineKind } from "../stream-deadlines.js";
import { HEAD_TIMEOUT_CODE } from "../upstream-failure.js";
import { withinBoundary } from "../fault-injection.js";
import { upstreamH2Fields } from "./h2-forward-headers.js";
import { answerOwnError, answerWithPage, grpcStatusOf } from "./h2-own-answer.js";
import { interceptsUpstreamError, logInterceptedError } from "../upstream-error-page.js";
import { MAX_INTERIM_HEADS, tooManyInterimHeads } from "../interim-limit.js";
import type { H2Request } from "./h2-request.js";
import { relayedFields } from "./h2-response-headers.js";
import { H2_ERROR } from "../../h2-codec/codec-error.js";
import type { ClientStream } from "./client-stream.js";
import type { H2cPool, H2cSessionUser } from "./h2c-pool.js";

/**
 * One per stream. Its callbacks on either port are its own methods, each behind the port's
 * fault boundary (stream-port.ts), which hands a defect of ours to `#fault`.
 */
export class H2Exchange implements AdmissionCandidate, H2cSessionUser, DeadlineTarget {
  readonly #context: RelayContext;
  readonly #pool: H2cPool;
  readonly #client: ClientStream;
  readonly #request: H2Request;
  readonly #record: RequestRecord;
  /** A body read before forwarding (the gRPC health hook's), sent whole with the head, then dropped. */
  #preRead: Buffer | undefined;
  readonly #remoteAddress: string | undefined;
  #queued: QueuedRequest | undefined;
  #session: H2Connection | undefined;
  #upstream: AppStream | undefined;
  #headTimer: NodeJS.Timeout | undefined;
  #trailers: string[] | undefined;
  /** The client's own request trailers, which end the app's stream. */
  #requestTrailers: string[] | undefined;
  #clientEnded: boolean;
  /** What went to the app of the body, kept to send again; made at the first piece. */
  #sentBody: SentBody | undefined;
  #responseStarted = false;
  #responseEnded = false;
  #retried = false;
  #interimHeads = 0;
  /** In the pool's waiters: a session is still to come. */
  #waitingForSession = false;
  #done = false;
  /** A defect of ours (or a send the codec refused) in one of this stream's callbacks: this stream is reset both ways, nothing else. */
  readonly #fault = (error: unknown): void => {
    this.#context.reportFault(error);
    const upstream = this.#upstream;
    this.#detachUpstream();
    upstream?.reset(true);
    this.#client.reset(false);
  };

  constructor(context: RelayContext, pool: H2cPool, client: ClientStream, request: H2Request, remoteAddress: string | undefined, preRead?: Buffer, preReadEnded = true) {
    this.#context = context;
    this.#pool = pool;
    this.#client = client;
    this.#request = request;
    this.#record = new RequestRecord(context, request, remoteAddress, "HTTP/2");
    this.#preRead = preRead;
    this.#clientEnded = request.bodiless || (preRead !== undefined && preReadEnded);
    this.#remoteAddress = remoteAddress;
    // Nothing is read until the app's stream exists: the client's window is the only buffer.
    client.pause();
    client.onData = (chunk) => this.#onClientData(chunk);
    client.onEnd = () => this.#onClientEnd();
    client.onDrain = () => this.#upstream?.resume();
    client.onTrailers = (fields) => {
      this.#requestTrailers = relayedFields(fields);
    };
    client.onClose = () => this.#onClientClose();
    client.onFault = this.#fault;
  }

  start(): void {
    this.#queued = requestAdmission(this.#context, this);
  }

  admitted(waitedMs: number | undefined): void {
    this.#queued = undefined;
    this.#record.admitted(waitedMs !== undefined, waitedMs, this);
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
    this.#failBeforeHead(503, new Error("overloaded"), "overloaded", true);
  }

  onSession(session: H2Connection): void {
    this.#waitingForSession = false;
    if (this.#done) {
      this.#pool.release(session);
      return;
    }
    this.#session = session;
    const endStream = this.#clientEnded && (this.#preRead === undefined || this.#preRead.length === 0);
    const upstream = this.#pool.request(session, this.#appHead(), endStream);
    this.#upstream = upstream;
    upstream.onResponse = (fields, ended) => this.#onResponse(fields, ended);
    upstream.onInterim = (fields) => this.#onInterim(fields);
    upstream.onData = (chunk) => this.#onUpstreamData(chunk);
    upstream.onTrailers = (fields) => this.#onUpstreamTrailers(fields);
    upstream.onEnd = () => this.#onUpstreamEnd();
    upstream.onDrain = () => this.#client.resume();
    upstream.onClose = () => this.#onUpstreamClose();
    upstream.onFault = this.#fault;
    const preRead = this.#preRead;
    // Sent once: a stream sent again (refused by the app) never carries a body.
    this.#preRead = undefined;
    if (preRead !== undefined && preRead.length > 0) {
      if (this.#clientEnded) upstream.end(preRead, this.#requestTrailers);
      else upstream.write(preRead);
      (this.#sentBody ??= new SentBody()).sent(preRead, true);
    }
    if (this.#clientEnded) return;
    // The body goes now: upload time does not count, the deadline starts again at its end, and
    // meanwhile --idle-timeout rules (as for an HTTP/1.1 upload).
    clearTimeout(this.#headTimer);
    this.#headTimer = undefined;
    this.#record.awaitingHead(false);
    this.#client.resume();
  }

  /**
   * The app's request head, the codec's flat list, made when it is sent (again, for a stream
   * the app refused) and dropped with the call: kept on the exchange for the whole call, V8
   * found these lists outliving its young generation and allocated them in the old one, where
   * each waited for a full collection (bench/grpc-profile.mjs --heap, BENCH_HEAP_SURVIVORS=1).
   */
  #appHead(): string[] {
    const context = this.#context;
    return upstreamH2Fields(this.#request, { target: context.pathPrefix + this.#request.url, clientAddress: clientAddressOf(this.#remoteAddress), upstreamHost: context.upstreamHost });
  }

  onSessionFailure(error: Error & { code?: string }): void {
    this.#waitingForSession = false;
    if (this.#done) return;
    const reason = upstreamErrorReason(error.code);
    this.#context.observer.upstreamError(reason);
    if (reason === "timeout") this.#failBeforeHead(504, error, "upstream response head timed out");
    else this.#failBeforeHead(502, error, "upstream unavailable");
  }

  #onClientData(chunk: Buffer): void {
    this.#context.garbage.streamed(chunk.length);
    (this.#sentBody ??= new SentBody()).sent(chunk);
    this.#record.bodyReceived(chunk.length);
    if (this.#upstream !== undefined && !this.#upstream.write(chunk)) this.#client.pause();
  }

  #onClientEnd(): void {
    this.#clientEnded = true;
    const upstream = this.#upstream;
    if (upstream === undefined || this.#done) return;
    // The client's trailers came before its end: they end the app's stream (none: an empty DATA with END_STREAM).
    upstream.end(undefined, this.#requestTrailers);
    if (!this.#responseStarted) this.#awaitHead();
  }

  /** `--response-header-timeout`, from the request's end (upload time does not count), per stream. */
  #awaitHead(): void {
    if (this.#headTimer !== undefined) return;
    this.#record.requestSent();
    this.#headTimer = setTimeout(() => withinBoundary("timer", () => this.#headTimedOut(), this.#fault), this.#context.responseHeaderTimeoutMs).unref();
  }

  #headTimedOut(): void {
    this.#headTimer = undefined;
    if (this.#responseStarted || this.#done) return;
    this.#stopWaiting();
    const upstream = this.#upstream;
    this.#detachUpstream();
    upstream?.reset(true);
    this.#context.observer.upstreamError("timeout");
    this.#failBeforeHead(504, Object.assign(new Error("upstream response head timed out"), { code: HEAD_TIMEOUT_CODE }), "upstream response head timed out");
  }

  /** The app's head and trailers come as the codec's flat lists, `:status` first in a head. */
  #onInterim(fields: readonly string[]): void {
    if (this.#done) return;
    if (++this.#interimHeads > MAX_INTERIM_HEADS) {
      const upstream = this.#upstream;
      this.#detachUpstream();
      upstream?.reset(true);
      return this.#failBeforeHead(502, tooManyInterimHeads(), "upstream unavailable");
    }
    const status = Number(fields[1]);
    if (status > 100 && status < 200 && !this.#client.headersSent) this.#client.additionalHeaders(relayedFields(fields));
  }

  #onResponse(fields: readonly string[], endStream: boolean): void {
    if (this.#done) return;
    clearTimeout(this.#headTimer);
    const status = Number(fields[1]);
    this.#record.upstreamHead(status);
    this.#sentBody?.letGo();
    if (interceptsUpstreamError(this.#context, this.#request, status)) return this.#interceptError(status);
    this.#responseStarted = true;
    const grpcStatus = grpcStatusOf(fields);
    if (grpcStatus !== undefined) this.#record.grpcStatus = grpcStatus;
    this.#client.respond(relayedFields(fields), endStream);
    if (endStream) this.#responseEnded = true;
  }

  /** An app's 5xx replaced by the branded page (upstream-error-page.ts): its stream is reset, its body never read. */
  #interceptError(status: number): void {
    const upstream = this.#upstream;
    this.#detachUpstream();
    upstream?.reset(true);
    this.#responseEnded = true;
    // What the client still sends is read and dropped, so its stream can close.
    this.#client.resume();
    logInterceptedError(this.#context, this.#request, this.#record.requestId, status);
    answerWithPage(this.#context, this.#client, this.#request, this.#record, status);
  }

  #onUpstreamData(chunk: Buffer): void {
    this.#context.garbage.streamed(chunk.length);
    this.#record.bodySent(chunk.length);
    if (!this.#client.write(chunk)) this.#upstream?.pause();
  }

  #onUpstreamTrailers(fields: readonly string[]): void {
    this.#trailers = relayedFields(fields);
    const grpcStatus = grpcStatusOf(fields);
    if (grpcStatus !== undefined) this.#record.grpcStatus = grpcStatus;
  }

  #onUpstreamEnd(): void {
    if (this.#done || !this.#responseStarted || this.#responseEnded) return;
    this.#responseEnded = true;
    // The app's trailers came before its end (node tells 'trailers' first); none: an empty DATA with END_STREAM.
    this.#client.end(undefined, this.#trailers);
  }

  #onUpstreamClose(): void {
    const upstream = this.#upstream;
    this.#detachUpstream();
    if (this.#done || upstream === undefined) return;
    const code = upstream.rstCode ?? 0;
    if (sendsAgain(code, this.#responseStarted, this.#retried, this.#sentBody?.lost ?? false)) {
      this.#retried = true;
      // What was sent goes first on the new stream, as a body read before forwarding does.
      const sent = this.#sentBody?.take();
      if (sent !== undefined && sent.length > 0) this.#preRead = sent;
      this.#client.pause(); // the rest of the body waits for the new stream, as for the first
      this.#acquireSession();
      return;
    }
    // Whatever the client still sends has nowhere to go: read and dropped, so its stream can end.
    this.#client.resume();
    if (this.#responseEnded && code === H2_ERROR.NO_ERROR) return;
    if (!this.#responseStarted) {
      this.#context.observer.upstreamError(code === 0 ? "other" : "reset");
      this.#failBeforeHead(502, Object.assign(new Error(`upstream stream closed (code ${code})`), { code: "ECONNRESET" }), "upstream unavailable");
      return;
    }
    // Mid-response: the client's stream is reset too, so it can never look complete.
    this.#context.errorLog.warn("upstream failed mid-response", { method: this.#request.method, url: this.#request.url.split("?", 1)[0], code: `RST_STREAM ${code}` });
    this.#client.reset(false);
  }

  /** CONTRACT §15 (stream-deadlines.ts): RST_STREAM CANCEL both ways, or a 504 when nothing was answered yet. */
  endForDeadline(kind: DeadlineKind): void {
    if (this.#done) return;
    const upstream = this.#upstream;
    this.#detachUpstream();
    upstream?.reset(true);
    if (kind === "duration" && !this.#client.headersSent) this.#failBeforeHead(504, new Error("max request duration reached"), "max request duration reached");
    else this.#client.reset(true);
  }

  /** The client's stream closed: answered, reset by the client, or its connection gone. */
  #onClientClose(): void {
    clearTimeout(this.#headTimer);
    const aborted = !this.#done && !(this.#responseEnded && this.#client.rstCode === H2_ERROR.NO_ERROR);
    this.#done = true;
    if (this.#queued !== undefined) this.#record.leftQueue(this.#queued);
    this.#queued = undefined;
    this.#stopWaiting();
    const upstream = this.#upstream;
    this.#detachUpstream();
    upstream?.reset(true);
    this.#record.finished(aborted);
  }

  #detachUpstream(): void {
    const session = this.#session;
    this.#session = undefined;
    this.#upstream = undefined;
    if (session !== undefined) this.#pool.release(session);
  }

  #failBeforeHead(status: number, error: Error, reason: string, overloaded = false): void {
    if (this.#done || this.#client.headersSent) return;
    clearTimeout(this.#headTimer);
    this.#responseEnded = true;
    // What the client still sends is read and dropped, so its stream can close.
    this.#client.resume();
    answerOwnError(this.#context, this.#client, this.#request, this.#record, status, error, reason, overloaded ? OVERLOADED : undefined);
  }
}
