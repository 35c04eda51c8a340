// The app's side of an exchange whose app speaks h2c, whatever its client speaks: a stream of the h2c pool, the request body sent (held until the stream exists, kept to send again), the head's deadline, interim answers counted, a refused stream sent again.
import { sendsAgain, type AppStream, type AppStreamUser } from "./app-stream.js";
import { SentBody } from "./sent-body.js";
import type { H2cPool, H2cSessionUser } from "./h2c-pool.js";
import type { H2Connection } from "../../h2-codec/h2-connection.js";
import { H2_ERROR } from "../../h2-codec/codec-error.js";
import { withoutQuery } from "../../access-log/access-log.js";
import { upstreamErrorReason } from "../proxy-observer.js";
import type { AppSide, AppUser } from "../app-side.js";
import type { ClientRequest, Forwarding } from "../forward-plan.js";
import { upstreamH2Fields } from "./h2-forward-headers.js";
import { withinBoundary } from "../fault-injection.js";
import { HELD_BODY_BYTES } from "../held-body-limit.js";
import { HeldOctets } from "../held-octets.js";
import { MAX_INTERIM_HEADS, tooManyInterimHeads } from "../interim-limit.js";
import type { RelayContext } from "../relay-context.js";
import type { RequestRecord } from "../request-record.js";
import { HEAD_TIMEOUT_CODE } from "../upstream-failure.js";
import { interceptsUpstreamError, logInterceptedError } from "../upstream-error-page.js";

/** One per request, made with its exchange; `open` once admitted. */
export class H2cAppSide implements AppSide, H2cSessionUser, AppStreamUser {
  readonly #context: RelayContext;
  readonly #pool: H2cPool;
  readonly #request: ClientRequest;
  readonly #record: RequestRecord;
  /** The wait before a refused connect is tried again (--upstream-connect-retry). */
  #retryTimer: NodeJS.Timeout | undefined;
  readonly #user: AppUser;
  /** What the request is encoded with (`forward`), each time a stream is opened for it. */
  #plan: Forwarding | undefined;
  #clientAddress = "";
  #session: H2Connection | undefined;
  #upstream: AppStream | undefined;
  /** Body octets waiting for the stream, sent before anything after them. */
  #held: HeldOctets | undefined;
  #requestEnded = false;
  /** The client's trailers, which end the app's stream. */
  #requestTrailers: readonly string[] | undefined;
  /** What went to the app of the body, kept to send again; made at the first piece. */
  #sentBody: SentBody | undefined;
  #headTimer: NodeJS.Timeout | undefined;
  #answered = false;
  #answerEnded = false;
  #retried = false;
  #interimHeads = 0;
  /** In the pool's waiters: a session is still to come. */
  #waitingForSession = false;
  /** The app is done with (answered, failed, let go): nothing more goes to it or comes from it. */
  #finished = false;

  constructor(context: RelayContext, pool: H2cPool, request: ClientRequest, record: RequestRecord, user: AppUser) {
    this.#context = context;
    this.#pool = pool;
    this.#request = request;
    this.#record = record;
    this.#user = user;
  }

  forward(plan: Forwarding, clientAddress: string): void {
    this.#plan = plan;
    this.#clientAddress = clientAddress;
  }

  /**
   * The app's request head, the codec's flat list, made when it is sent (again, for a stream
   * the app refused) and dropped with the call: kept for the whole call, V8 found these lists
   * outliving its young generation and allocated them in the old one, where each waited for a
   * full collection (bench/grpc-profile.mjs --heap, BENCH_HEAP_SURVIVORS=1).
   */
  #appHead(): string[] {
    return upstreamH2Fields(this.#request, this.#plan!, this.#clientAddress, this.#context.upstreamHost);
  }

  /** No HTTP/1.1 read brings an h2c head: nothing to wait for. */
  holdUntilReadEnds(): boolean {
    return false;
  }

  corkClientUntilReadEnds(): void {}

  /** The app's final head came and is relayed. */
  get answered(): boolean {
    return this.#answered;
  }

  /** A stream reads the body whatever it has answered (a duplex call answers first): dropped only once the app is done with. */
  get takesBody(): boolean {
    return true;
  }

  /**
   * Admitted: a stream is asked for. The head's deadline runs from here, the connection's setup
   * included (an app that accepts and never sends SETTINGS gets its 504 like one that never answers).
   */
  open(): void {
    this.#awaitHead();
    this.#acquireSession();
  }

  /**
   * A piece of the client's body, sent or held (copied) for the stream to come; dropped once the
   * app is done with. False when the client should pause.
   */
  sendBody(chunk: Buffer): boolean {
    if (this.#finished || chunk.length === 0) return true;
    const upstream = this.#upstream;
    if (upstream === undefined) {
      const held = (this.#held ??= new HeldOctets());
      held.append(chunk);
      return held.length <= HELD_BODY_BYTES;
    }
    (this.#sentBody ??= new SentBody()).sent(chunk);
    return upstream.write(chunk);
  }

  /** The client's body ended, with its trailers if any (the codec's flat list). */
  endBody(trailers?: readonly string[]): void {
    this.#requestEnded = true;
    this.#requestTrailers = trailers;
    const upstream = this.#upstream;
    if (upstream === undefined || this.#finished) return;
    upstream.end(undefined, trailers);
    if (!this.#answered) this.#awaitHead();
  }

  /** The client took what it was given: the app's stream goes on. */
  resume(): void {
    this.#upstream?.resume();
  }

  /** The exchange ends without the app (the client gone, a deadline, a defect): its stream is reset, its wait given up. */
  cancel(): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#sentBody?.letGo();
    clearTimeout(this.#headTimer);
    clearTimeout(this.#retryTimer);
    this.#stopWaiting();
    this.#letGoOfStream();
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

  onSession(session: H2Connection): void {
    this.#waitingForSession = false;
    if (this.#finished) return this.#pool.release(session);
    this.#session = session;
    const held = this.#held;
    const trailers = this.#requestTrailers;
    const endStream = this.#requestEnded && held === undefined && trailers === undefined;
    const upstream = this.#pool.request(session, this.#appHead(), endStream);
    this.#upstream = upstream;
    upstream.user = this;
    if (held !== undefined) {
      this.#held = undefined;
      const body = held.take();
      if (this.#requestEnded) upstream.end(body, trailers);
      else upstream.write(body);
      (this.#sentBody ??= new SentBody()).sent(body);
    } else if (this.#requestEnded && !endStream) upstream.end(undefined, trailers);
    if (!this.#requestEnded) {
      // The body goes now: upload time does not count, the deadline starts again at its end, and
      // meanwhile --idle-timeout rules (as for an HTTP/1.1 upload).
      clearTimeout(this.#headTimer);
      this.#headTimer = undefined;
      this.#record.awaitingHead(false);
    }
    this.#user.resumeBody();
  }

  onSessionFailure(error: Error & { code?: string }): void {
    this.#waitingForSession = false;
    if (this.#finished) return;
    // No session, so no stream: nothing of the request was sent (the body is held).
    const retryIn = this.#record.connectRetry?.nextDelay(error.code);
    if (retryIn !== undefined) {
      this.#context.observer.connectRetried();
      this.#retryTimer = setTimeout(() => {
        this.#retryTimer = undefined;
        if (!this.#finished) this.#acquireSession();
      }, retryIn);
      return;
    }
    const reason = upstreamErrorReason(error.code);
    this.#context.observer.upstreamError(reason);
    if (reason === "timeout") this.#fail(504, error, "upstream response head timed out");
    else this.#fail(502, error, "upstream unavailable");
  }

  /** `--response-header-timeout`, from admission and again from the request's end (upload time does not count). */
  #awaitHead(): void {
    this.#record.requestSent();
    this.#headTimer ??= setTimeout(() => withinBoundary("timer", () => this.#headTimedOut(), (error) => this.#user.fault(error)), this.#context.responseHeaderTimeoutMs).unref();
  }

  #headTimedOut(): void {
    this.#headTimer = undefined;
    if (this.#answered || this.#finished) return;
    this.#stopWaiting();
    this.#letGoOfStream();
    this.#context.observer.upstreamError("timeout");
    this.#fail(504, Object.assign(new Error("upstream response head timed out"), { code: HEAD_TIMEOUT_CODE }), "upstream response head timed out");
  }

  // ---- what the app's stream tells (AppStreamUser); heads and trailers as the codec's flat lists, `:status` first in a head ----

  streamInterim(fields: readonly string[]): void {
    if (this.#finished || this.#answered) return;
    if (++this.#interimHeads > MAX_INTERIM_HEADS) {
      this.#letGoOfStream();
      return this.#fail(502, tooManyInterimHeads(), "upstream unavailable");
    }
    if (!this.#user.interim(Number(fields[1]), "", fields)) this.#upstream?.pause();
  }

  streamResponse(fields: readonly string[], ended: boolean): void {
    if (this.#finished) return;
    clearTimeout(this.#headTimer);
    const status = Number(fields[1]);
    this.#record.upstreamHead(status);
    // Answered, so no longer "not processed": what was kept to send again goes.
    this.#sentBody?.letGo();
    if (interceptsUpstreamError(this.#context, this.#request, status)) {
      // The page goes at once; the app's body is never read.
      this.#finished = true;
      this.#letGoOfStream();
      logInterceptedError(this.#context, this.#request, this.#record.requestId, status);
      return this.#user.interceptError(status);
    }
    this.#answered = true;
    this.#user.head(status, "", fields, ended);
  }

  streamData(chunk: Buffer): void {
    // Not counted for garbage here: the pool's socket reads are (H2ConnectionOptions.reads).
    if (this.#finished) return;
    if (!this.#user.data(chunk)) this.#upstream?.pause();
  }

  streamTrailers(fields: readonly string[]): void {
    this.#user.trailers(fields);
  }

  streamEnd(): void {
    if (this.#finished || !this.#answered || this.#answerEnded) return;
    this.#answerEnded = true;
    this.#user.end();
  }

  streamDrain(): void {
    this.#user.resumeBody();
  }

  /** A defect of ours in one of these calls: the exchange ends both of its sides. */
  streamFault(error: unknown): void {
    this.#user.fault(error);
  }

  streamClosed(): void {
    const upstream = this.#upstream;
    this.#detach();
    if (this.#finished || upstream === undefined) return;
    const code = upstream.rstCode;
    if (sendsAgain(code, this.#answered, this.#retried, this.#sentBody?.lost ?? false)) {
      this.#retried = true;
      // What was sent goes first on the new stream, before what came since.
      const sent = this.#sentBody?.take();
      if (sent !== undefined && sent.length > 0) {
        const held = new HeldOctets();
        held.append(sent);
        if (this.#held !== undefined) held.append(this.#held.take());
        this.#held = held;
      }
      this.#user.pauseBody(); // the rest of the body waits for the new stream, as for the first
      this.#acquireSession();
      return;
    }
    this.#finished = true;
    if (!this.#answered) {
      this.#context.observer.upstreamError(code === H2_ERROR.NO_ERROR ? "other" : "reset");
      return this.#fail(502, Object.assign(new Error(`upstream stream closed (code ${code})`), { code: "ECONNRESET" }), "upstream unavailable");
    }
    // Whatever the client still sends has nowhere to go: read and dropped, so its side can end.
    this.#user.resumeBody();
    if (this.#answerEnded && code === H2_ERROR.NO_ERROR) return;
    // A whole answer and then a reset (the app wants no more of the body, with a code other than
    // NO_ERROR) failed nothing; the client is still told to stop.
    if (!this.#answerEnded) this.#context.errorLog.warn("upstream failed mid-response", { method: this.#request.method, url: withoutQuery(this.#request.url), code: `RST_STREAM ${code}` });
    this.#user.answerCut();
  }

  #fail(status: number, error: Error, reason: string): void {
    this.#finished = true;
    this.#sentBody?.letGo();
    clearTimeout(this.#headTimer);
    this.#user.failBeforeHead(status, error, reason);
  }

  /** The stream is reset (if still open) and its session given back. */
  #letGoOfStream(): void {
    const upstream = this.#upstream;
    this.#detach();
    upstream?.reset(true);
  }

  #detach(): void {
    const session = this.#session;
    this.#session = undefined;
    this.#upstream = undefined;
    if (session !== undefined) this.#pool.release(session);
  }
}
