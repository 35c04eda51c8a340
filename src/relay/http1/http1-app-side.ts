// The app's side of an exchange whose app speaks HTTP/1.1, whatever its client speaks: a connection of the pool, the head and body written (held until connected), the head's deadline, interim answers counted, a switch of protocol refused unless asked, a failure before the head a 502 or 504 (or sent again once), after it a cut.
import type { Socket } from "node:net";
import { withoutQuery } from "../../access-log/access-log.js";
import { upstreamErrorReason } from "../proxy-observer.js";
import type { AppSide, AppUser, ReadEndWaiter } from "../app-side.js";
import type { ClientRequest, Forwarding } from "../forward-plan.js";
import { HELD_BODY_BYTES } from "../held-body-limit.js";
import { HeldOctets } from "../held-octets.js";
import { MAX_INTERIM_HEADS, tooManyInterimHeads } from "../interim-limit.js";
import type { RelayContext } from "../relay-context.js";
import type { RequestRecord } from "../request-record.js";
import { HEAD_TIMEOUT_CODE, type UpstreamFailure } from "../upstream-failure.js";
import { interceptsUpstreamError, logInterceptedError } from "../upstream-error-page.js";
import { LAST_CHUNK, writeBodyChunk } from "./body-framing.js";
import { forwardedRequestHead, type ForwardedHead } from "./forwarded-request-head.js";
import { unaskedSwitch } from "./interim-responses.js";
import { BODY, type BodyDirective, type ParsedHead } from "./llhttp-binding.js";
import { canBeSentAgain, closedUnderUs } from "./retry-policy.js";
import type { UpstreamConnection, UpstreamOwner } from "./upstream-connection.js";
import type { UpstreamPool } from "./upstream-pool.js";

/** What only an HTTP/1.1 app tells (the rest: AppUser): a switch to the WebSocket asked for, then its tunnel. */
export interface Http1AppUser extends AppUser {
  /** The 101 to the WebSocket the request asked for: its head goes to the client; the tunnel follows (`tunnel`). */
  switchedProtocols(head: ParsedHead): void;
  tunnel(socket: Socket, rest: Buffer): void;
}

/** How a client's protocol wants its requests sent; one constant per kind of exchange. */
export interface Http1SendRules {
  /** May go again on a new connection when the one it took was closed under it (retry-policy.ts); else it takes one fresh enough not to race the app's idle close. */
  readonly mayResend: boolean;
  /**
   * The request's last byte is kept back until `endBody`: with a Content-Length (or none and no
   * body) the app takes the request as whole at that byte, and an h2 client's stream is known
   * well-formed (its DATA added up to the length, its trailers valid) and not reset only at
   * END_STREAM. A chunked body ends with its last chunk, sent then anyway.
   */
  readonly holdLastByte: boolean;
}

/** An HTTP/1.1 client's body is checked by llhttp as it is read, so its last byte goes as it comes; an idempotent request may go again. */
const HTTP1_CLIENT_RULES: Http1SendRules = { mayResend: true, holdLastByte: false };

/**
 * An h2 client's request is whole only at its END_STREAM, so its last byte waits for it; never
 * sent again: it goes only on a connection fresh enough not to race the app's idle close.
 */
const H2_CLIENT_RULES: Http1SendRules = { mayResend: false, holdLastByte: true };

/** The rules for a client of this protocol. */
export function sendRulesFor(protocol: "HTTP/1.1" | "HTTP/2"): Http1SendRules {
  return protocol === "HTTP/1.1" ? HTTP1_CLIENT_RULES : H2_CLIENT_RULES;
}

const NO_HEAD: ForwardedHead = { octets: Buffer.alloc(0), framing: "none" };

/** One per request, made with its exchange; `forward` once its head is planned, `open` once admitted. */
export class Http1AppSide implements AppSide, UpstreamOwner {
  readonly #context: RelayContext;
  readonly #pool: UpstreamPool;
  readonly #request: ClientRequest;
  readonly #record: RequestRecord;
  readonly #user: Http1AppUser;
  readonly #rules: Http1SendRules;
  #head: ForwardedHead = NO_HEAD;
  /** "websocket" or another upgrade the client asked for: a fresh connection, never sent again; only a 101 to a WebSocket becomes a tunnel. */
  #upgrade: "websocket" | "other" | undefined;
  #upstream: UpstreamConnection | undefined;
  /** Body octets that came before the connection was ready, written behind the head. */
  #held: HeldOctets | undefined;
  /** Content-Length bytes still to come, with holdLastByte (0 without one). */
  #bodyLeft = 0;
  /** The request's last byte, kept back until the end (holdLastByte). */
  #lastByte: string | Buffer | undefined;
  #requestEnded = false;
  /** The whole request (head, body, last chunk) has been written to the app. */
  #requestSent = false;
  #answered = false;
  #interimHeads = 0;
  #retried = false;
  /** The wait before a refused connect is tried again (--upstream-connect-retry). */
  #retryTimer: NodeJS.Timeout | undefined;
  /** The app is done with (failed, let go, a tunnel): nothing more goes to it or comes from it. */
  #finished = false;

  /** Made with its exchange, which may hear of the body (held) before its head is planned. */
  constructor(context: RelayContext, pool: UpstreamPool, request: ClientRequest, record: RequestRecord, rules: Http1SendRules, user: Http1AppUser) {
    this.#context = context;
    this.#pool = pool;
    this.#request = request;
    this.#record = record;
    this.#rules = rules;
    this.#user = user;
  }

  /** The head the request goes with, encoded from the plan before admission; `open` sends it. */
  forward(plan: Forwarding, clientAddress: string): void {
    const head = forwardedRequestHead(this.#request, plan, clientAddress, this.#context.upstreamHost);
    this.#head = head;
    this.#upgrade = plan.upgrade;
    if (this.#rules.holdLastByte && head.framing === "length") this.#bodyLeft = Number(this.#request.header("content-length"));
  }

  /** The app's final head came and is relayed. */
  get answered(): boolean {
    return this.#answered;
  }

  /** Once its answer has begun, the app reads no more of the request: what is left is discarded (an early 413). */
  get takesBody(): boolean {
    return !this.#answered;
  }

  /** Admitted: a connection is taken (or made) and the head goes once it is ready. */
  open(): void {
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

  /** Head, the body held so far and, for a request already whole, its end: one write. */
  #sendHead(): void {
    const upstream = this.#upstream!;
    const head = this.#head;
    const held = this.#held;
    this.#held = undefined;
    const holdLastByte = this.#rules.holdLastByte && !this.#requestEnded && head.framing !== "chunked" && this.#bodyLeft === 0;
    // The head alone (a GET) needs no cork: corked, even one write cost a buffered entry and its flush.
    const corked = held !== undefined || holdLastByte || this.#lastByte !== undefined || head.framing === "chunked";
    if (corked) upstream.socket.cork();
    if (holdLastByte) {
      upstream.write(head.octets.subarray(0, head.octets.length - 1));
      this.#lastByte = "\n";
    } else upstream.write(head.octets);
    if (held !== undefined) this.#writeBody(upstream, held.take());
    if (this.#requestEnded) this.#sendRequestEnd(upstream);
    else this.#record.awaitingHead(false);
    if (corked) upstream.socket.uncork();
    this.#user.resumeBody();
  }

  /** A piece of the client's body, written, or held (copied) for the connection to come. False when the client should pause. */
  sendBody(chunk: Buffer): boolean {
    if (this.#finished || chunk.length === 0) return true;
    const upstream = this.#upstream;
    if (upstream === undefined || !upstream.connected) {
      const held = (this.#held ??= new HeldOctets());
      held.append(chunk);
      return held.length <= HELD_BODY_BYTES;
    }
    return this.#writeBody(upstream, chunk);
  }

  #writeBody(upstream: UpstreamConnection, chunk: Buffer): boolean {
    const framing = this.#head.framing;
    if (framing === "chunked" || !this.#rules.holdLastByte) return writeBodyChunk(upstream.socket, framing === "chunked", chunk);
    // An h2 client's DATA never goes past its content-length (the codec's check).
    this.#bodyLeft -= chunk.length;
    if (this.#bodyLeft > 0) return upstream.socket.write(chunk);
    this.#lastByte = chunk.subarray(chunk.length - 1);
    return chunk.length === 1 || upstream.socket.write(chunk.subarray(0, chunk.length - 1));
  }

  /** The client's body ended (an h2 client's trailers are not sent on: Trailer is hop-by-hop in HTTP/1.1 here). */
  endBody(): void {
    this.#requestEnded = true;
    const upstream = this.#upstream;
    if (!this.#finished && upstream !== undefined && upstream.connected && !this.#requestSent) this.#sendRequestEnd(upstream);
  }

  /** The request is all at the app: the response head timeout starts (time spent uploading does not count). */
  #sendRequestEnd(upstream: UpstreamConnection): void {
    const lastByte = this.#lastByte;
    this.#lastByte = undefined;
    if (lastByte !== undefined) upstream.write(lastByte);
    if (this.#head.framing === "chunked") upstream.write(LAST_CHUNK);
    this.#requestSent = true;
    this.#record.requestSent();
    upstream.awaitHead(this.#context.responseHeaderTimeoutMs);
  }

  /** The client took what it was given: the app's connection is read again. */
  resume(): void {
    this.#upstream?.resumeReading();
  }

  /** An HTTP/1.1 client's socket stays corked while the app's read that brought the head is parsed (upstream-connection.ts). */
  corkClientUntilReadEnds(client: Socket): void {
    this.#upstream?.corkClientUntilReadEnds(client);
  }

  /** `waiter` hears when the app's read that brought the head has been parsed (upstream-connection.ts); false when no read is under way. */
  holdUntilReadEnds(waiter: ReadEndWaiter): boolean {
    const upstream = this.#upstream;
    if (upstream === undefined) return false;
    upstream.holdUntilReadEnds(waiter);
    return true;
  }

  /** The exchange ends without the app (the client gone, a deadline, a defect): a connection mid-exchange is dropped, never reused. */
  cancel(): void {
    this.#finished = true;
    clearTimeout(this.#retryTimer);
    this.#dropConnection();
  }

  onUpstreamDrain(): void {
    this.#user.resumeBody();
  }

  onResponseHead(head: ParsedHead): BodyDirective {
    const status = head.statusCode;
    if (status < 200 && status !== 101) return this.#onInterim(head);
    if (status === 101) return this.#onSwitchingProtocols(head);
    this.#record.upstreamHead(status);
    if (interceptsUpstreamError(this.#context, this.#request, status)) {
      // The page goes at once; the app's body is never read, and its connection, mid-body, is not reused.
      this.#finished = true;
      this.#dropConnection();
      logInterceptedError(this.#context, this.#request, this.#record.requestId, status);
      this.#user.interceptError(status);
      return BODY.skip;
    }
    this.#answered = true;
    this.#user.head(status, head.statusMessage, head.headers, false);
    return this.#request.method === "HEAD" ? BODY.skip : BODY.parse;
  }

  /** Interim answers (100 Continue, 103 Early Hints) are relayed as they come, and only so many: a flood of them is a 502. */
  #onInterim(head: ParsedHead): BodyDirective {
    if (++this.#interimHeads > MAX_INTERIM_HEADS) return this.#failOnHead(tooManyInterimHeads(), "upstream unavailable");
    if (!this.#user.interim(head.statusCode, head.statusMessage, head.headers)) this.#upstream?.pauseReading();
    return BODY.parse;
  }

  /** Only a 101 to the WebSocket asked for becomes a tunnel; anything else is a 502, never a raw pipe. */
  #onSwitchingProtocols(head: ParsedHead): BodyDirective {
    const unasked = unaskedSwitch(this.#upgrade, head);
    if (unasked !== undefined) return this.#failOnHead(new Error(`upstream switched to ${JSON.stringify(unasked)}`), "upstream switched to a protocol that was not asked for");
    this.#record.upstreamHead(101);
    this.#user.switchedProtocols(head);
    return BODY.upgrade;
  }

  /** A head the client must not get: the connection is dropped and the answer is a 502. */
  #failOnHead(error: Error, reason: string): BodyDirective {
    this.#dropConnection();
    this.#fail(502, error, reason);
    return BODY.skip;
  }

  onTunnel(socket: Socket, rest: Buffer): void {
    this.#finished = true;
    this.#upstream = undefined;
    this.#user.tunnel(socket, rest);
  }

  onResponseBody(chunk: Buffer): void {
    this.#context.garbage.streamed(chunk.length);
    if (this.#finished) return;
    if (!this.#user.data(chunk)) this.#upstream?.pauseReading();
  }

  onResponseEnd(keepAlive: boolean): void {
    const upstream = this.#upstream;
    this.#upstream = undefined;
    if (upstream !== undefined) this.#pool.release(upstream, keepAlive && this.#requestSent && !this.#finished);
    if (this.#finished) return;
    this.#finished = true;
    this.#user.end();
  }

  onUpstreamFailure(failure: UpstreamFailure): void {
    const upstream = this.#upstream;
    this.#upstream = undefined;
    if (this.#finished) return;
    if (!this.#answered) {
      // Refused before the connect, so nothing of the request was written (the head waits for it).
      const retryIn = upstream !== undefined && !upstream.connected ? this.#record.connectRetry?.nextDelay(failure.code) : undefined;
      if (retryIn !== undefined) {
        this.#context.observer.connectRetried();
        this.#retryTimer = setTimeout(() => {
          this.#retryTimer = undefined;
          if (!this.#finished) this.open();
        }, retryIn);
        return;
      }
      if (upstream !== undefined && this.#resendable() && upstream.unanswered && closedUnderUs(failure.code)) {
        // Once, for an idempotent request without a body whose connection was closed or reset
        // before any byte of an answer: the app's idle close racing our reuse, most often.
        this.#retried = true;
        this.#requestSent = false;
        this.open();
        return;
      }
      const timedOut = failure.code === HEAD_TIMEOUT_CODE;
      this.#context.observer.upstreamError(upstreamErrorReason(failure.code));
      return this.#fail(timedOut ? 504 : 502, failure, timedOut ? "upstream response head timed out" : "upstream unavailable");
    }
    this.#finished = true;
    this.#context.errorLog.warn("upstream failed mid-response", { method: this.#request.method, url: withoutQuery(this.#request.url), code: failure.code, err: failure.message });
    this.#user.answerCut();
  }

  /** A defect of ours in one of the connection's callbacks (already destroyed). */
  onInternalFault(error: unknown): void {
    this.#upstream = undefined;
    this.#user.fault(error);
  }

  /** Not tried again yet, and safe to send again (retry-policy.ts). */
  #resendable(): boolean {
    return this.#rules.mayResend && !this.#retried && canBeSentAgain(this.#request.method, this.#head.framing, this.#upgrade !== undefined);
  }

  #fail(status: number, error: Error, reason: string): void {
    this.#finished = true;
    this.#user.failBeforeHead(status, error, reason);
  }

  #dropConnection(): void {
    const upstream = this.#upstream;
    this.#upstream = undefined;
    upstream?.destroy();
  }
}
