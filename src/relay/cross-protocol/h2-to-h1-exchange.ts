// One h2 stream relayed to an HTTP/1.1 app through the HTTP/1.1 pool (--upstream-protocol http1): the head translated once, bodies framed for HTTP/1.1, backpressure both ways.
import type { Socket } from "node:net";
import { upstreamErrorReason } from "../../http/proxy-observer.js";
import type { QueuedRequest } from "../../overload/concurrency-limiter.js";
import { OVERLOADED, recordOverloaded, requestAdmission, type AdmissionCandidate, type OverloadReason } from "../admission.js";
import { LAST_CHUNK, writeBodyChunk } from "../http1/body-framing.js";
import type { RequestBodyFraming } from "../http1/forwarded-request-head.js";
import { clientAddressOf } from "../client-address.js";
import { BODY, type BodyDirective, type ParsedHead } from "../http1/llhttp-binding.js";
import type { RelayContext } from "../relay-context.js";
import { RequestRecord, type DeadlineTarget } from "../request-record.js";
import type { DeadlineKind } from "../stream-deadlines.js";
import type { UpstreamConnection, UpstreamOwner } from "../http1/upstream-connection.js";
import type { UpstreamPool } from "../http1/upstream-pool.js";
import { HEAD_TIMEOUT_CODE, type UpstreamFailure } from "../upstream-failure.js";
import { http1RequestHead } from "./h2-to-h1-head.js";
import { answerOwnError, answerWithPage } from "../http2/h2-own-answer.js";
import { interceptsUpstreamError, logInterceptedError } from "../upstream-error-page.js";
import { MAX_INTERIM_HEADS, tooManyInterimHeads } from "../interim-limit.js";
import type { H2Request } from "../http2/h2-request.js";
import { h1ToH2Fields } from "../http2/h2-response-headers.js";
import { H2_ERROR } from "../../h2-codec/codec-error.js";
import type { ClientStream } from "../http2/client-stream.js";

/** One per stream, an UpstreamOwner of the HTTP/1.1 pool like the HTTP/1.1 exchange. */
export class H2ToH1Exchange implements AdmissionCandidate, UpstreamOwner, DeadlineTarget {
  readonly #context: RelayContext;
  readonly #pool: UpstreamPool;
  readonly #client: ClientStream;
  readonly #request: H2Request;
  readonly #record: RequestRecord;
  readonly #headText: string;
  readonly #framing: RequestBodyFraming;
  /** Content-Length bytes still to come (0 without one). */
  #bodyLeft: number;
  /**
   * The request's last byte, kept back until the client's END_STREAM. With a Content-Length (or
   * with none and no body) the app takes the request as whole at that byte, but only at
   * END_STREAM does nghttp2 know the stream well-formed (its DATA added up to the length, its
   * trailers were valid) and not reset or cut off. A chunked body ends with its last chunk, sent
   * then anyway.
   */
  #held: string | Buffer | undefined;
  #preRead: Buffer | undefined;
  #queued: QueuedRequest | undefined;
  #upstream: UpstreamConnection | undefined;
  #clientEnded: boolean;
  #requestSent = false;
  #responseStarted = false;
  #interimHeads = 0;
  #responseEnded = false;
  #done = false;
  /** A defect of ours in one of the client stream's callbacks (behind its port's fault boundary): its HTTP/1.1 connection is dropped and the stream reset. */
  readonly #fault = (error: unknown): void => {
    this.#context.reportFault(error);
    const upstream = this.#upstream;
    this.#upstream = undefined;
    upstream?.destroy();
    this.#client.reset(false);
  };

  constructor(context: RelayContext, pool: UpstreamPool, client: ClientStream, request: H2Request, remoteAddress: string | undefined, preRead?: Buffer, preReadEnded = true) {
    this.#context = context;
    this.#pool = pool;
    this.#client = client;
    this.#request = request;
    this.#record = new RequestRecord(context, request, remoteAddress, "HTTP/2");
    this.#preRead = preRead;
    this.#clientEnded = request.bodiless || (preRead !== undefined && preReadEnded);
    const head = http1RequestHead(request, { target: context.pathPrefix + request.url, clientAddress: clientAddressOf(remoteAddress), upstreamHost: context.upstreamHost });
    this.#headText = head.text;
    this.#framing = head.framing;
    this.#bodyLeft = head.framing === "length" ? Number(request.header("content-length")) : 0;
    client.pause();
    client.onData = (chunk) => this.#onClientData(chunk);
    client.onEnd = () => this.#onClientEnd();
    client.onDrain = () => this.#upstream?.resumeReading();
    client.onClose = () => this.#onClientClose();
    client.onFault = this.#fault;
  }

  start(): void {
    this.#queued = requestAdmission(this.#context, this);
  }

  admitted(waitedMs: number | undefined): void {
    this.#queued = undefined;
    this.#record.admitted(waitedMs !== undefined, waitedMs, this);
    // Never sent again (see onUpstreamFailure): it goes only on a connection fresh enough not to race the app's idle close.
    const upstream = this.#pool.acquire(this, false);
    this.#upstream = upstream;
    if (upstream.connected) this.#sendHead();
    else {
      this.#record.awaitingHead(true);
      upstream.awaitHead(this.#context.responseHeaderTimeoutMs);
    }
  }

  rejected(_reason: "queue_timeout", waitedMs: number): void {
    this.#queued = undefined;
    this.refuseOverloaded("queue timeout", waitedMs);
  }

  refuseOverloaded(reason: OverloadReason, waitedMs: number): void {
    recordOverloaded(this.#context, this.#record, this.#request, reason, waitedMs);
    this.#failBeforeHead(503, new Error("overloaded"), "overloaded", true);
  }

  onConnected(): void {
    this.#sendHead();
  }

  #sendHead(): void {
    const upstream = this.#upstream!;
    upstream.socket.cork();
    if (!this.#clientEnded && this.#framing !== "chunked" && this.#bodyLeft === 0) {
      upstream.write(this.#headText.slice(0, -1));
      this.#held = "\n";
    } else {
      upstream.write(this.#headText);
    }
    const preRead = this.#preRead;
    this.#preRead = undefined;
    if (preRead !== undefined && preRead.length > 0) this.#writeBody(upstream, preRead);
    if (this.#clientEnded) this.#sendRequestEnd(upstream);
    else this.#record.awaitingHead(false);
    upstream.socket.uncork();
    if (!this.#clientEnded) this.#client.resume();
  }

  #writeBody(upstream: UpstreamConnection, chunk: Buffer): boolean {
    if (this.#framing === "chunked") return writeBodyChunk(upstream.socket, true, chunk);
    // nghttp2 lets no more DATA through than the content-length says.
    this.#bodyLeft -= chunk.length;
    if (this.#bodyLeft > 0 || chunk.length === 0) return upstream.socket.write(chunk);
    this.#held = chunk.subarray(chunk.length - 1);
    return chunk.length === 1 || upstream.socket.write(chunk.subarray(0, chunk.length - 1));
  }

  #sendRequestEnd(upstream: UpstreamConnection): void {
    const held = this.#held;
    this.#held = undefined;
    if (held !== undefined) upstream.write(held);
    if (this.#framing === "chunked") upstream.write(LAST_CHUNK);
    this.#requestSent = true;
    this.#record.requestSent();
    upstream.awaitHead(this.#context.responseHeaderTimeoutMs);
  }

  #onClientData(chunk: Buffer): void {
    this.#context.garbage.streamed(chunk.length);
    const upstream = this.#upstream;
    if (upstream === undefined || this.#done) return;
    this.#record.bodyReceived(chunk.length);
    if (!this.#writeBody(upstream, chunk)) this.#client.pause();
  }

  #onClientEnd(): void {
    // Told only for an END_STREAM the codec found well-formed (its DATA added up to the length).
    this.#clientEnded = true;
    const upstream = this.#upstream;
    if (upstream !== undefined && upstream.connected && !this.#requestSent && !this.#done) this.#sendRequestEnd(upstream);
  }

  onUpstreamDrain(): void {
    this.#client.resume();
  }

  onResponseHead(head: ParsedHead): BodyDirective {
    const status = head.statusCode;
    if (status < 200 && status !== 101) {
      if (++this.#interimHeads > MAX_INTERIM_HEADS) {
        const upstream = this.#upstream;
        this.#upstream = undefined;
        upstream?.destroy();
        this.#failBeforeHead(502, tooManyInterimHeads(), "upstream unavailable");
        return BODY.skip;
      }
      if (status !== 100 && !this.#client.headersSent) this.#client.additionalHeaders(h1ToH2Fields(status, head.headers));
      return BODY.parse;
    }
    if (status === 101) {
      const upstream = this.#upstream;
      this.#upstream = undefined;
      upstream?.destroy();
      this.#failBeforeHead(502, new Error("upstream switched protocols"), "upstream switched to a protocol that was not asked for");
      return BODY.skip;
    }
    this.#record.upstreamHead(status);
    if (interceptsUpstreamError(this.#context, this.#request, status)) return this.#interceptError(status);
    this.#responseStarted = true;
    const bodiless = this.#request.method === "HEAD" || status === 204 || status === 304;
    this.#client.respond(h1ToH2Fields(status, head.headers), bodiless);
    if (bodiless) this.#responseEnded = true;
    return this.#request.method === "HEAD" ? BODY.skip : BODY.parse;
  }

  /** An app's 5xx replaced by the branded page (upstream-error-page.ts): its connection, mid-body, is closed, its body never read. */
  #interceptError(status: number): BodyDirective {
    const upstream = this.#upstream;
    this.#upstream = undefined;
    upstream?.destroy();
    this.#responseEnded = true;
    // What the client still sends is read and dropped, so its stream can close.
    this.#client.resume();
    logInterceptedError(this.#context, this.#request, this.#record.requestId, status);
    answerWithPage(this.#context, this.#client, this.#request, this.#record, status);
    return BODY.skip;
  }

  onResponseBody(chunk: Buffer): void {
    this.#context.garbage.streamed(chunk.length);
    if (this.#done || this.#responseEnded) return;
    this.#record.bodySent(chunk.length);
    if (!this.#client.write(chunk)) this.#upstream?.pauseReading();
  }

  onResponseEnd(keepAlive: boolean): void {
    const upstream = this.#upstream;
    this.#upstream = undefined;
    if (upstream !== undefined) this.#pool.release(upstream, keepAlive && this.#requestSent && !this.#done);
    if (this.#done || this.#responseEnded) return;
    this.#responseEnded = true;
    this.#client.end();
  }

  onTunnel(socket: Socket): void {
    socket.destroy();
  }

  /** A defect of ours in the HTTP/1.1 connection's callbacks (already destroyed): this stream only gets the 502, or its reset. */
  onInternalFault(error: unknown): void {
    this.#upstream = undefined;
    this.#context.reportFault(error);
    if (this.#done) return;
    if (!this.#responseStarted) this.#failBeforeHead(502, error instanceof Error ? error : new Error(String(error)), "upstream unavailable");
    else this.#client.reset(false);
  }

  onUpstreamFailure(failure: UpstreamFailure): void {
    this.#upstream = undefined;
    if (this.#done) return;
    if (!this.#responseStarted) {
      const timedOut = failure.code === HEAD_TIMEOUT_CODE;
      this.#context.observer.upstreamError(upstreamErrorReason(failure.code));
      this.#failBeforeHead(timedOut ? 504 : 502, failure, timedOut ? "upstream response head timed out" : "upstream unavailable");
      return;
    }
    this.#context.errorLog.warn("upstream failed mid-response", { method: this.#request.method, url: this.#request.url.split("?", 1)[0], code: failure.code, err: failure.message });
    this.#client.reset(false);
  }

  /** CONTRACT §15 (stream-deadlines.ts): the app's connection dropped; the client gets a 504 when nothing was answered yet, else RST_STREAM CANCEL. */
  endForDeadline(kind: DeadlineKind): void {
    if (this.#done) return;
    const upstream = this.#upstream;
    this.#upstream = undefined;
    upstream?.destroy();
    if (kind === "duration" && !this.#client.headersSent) this.#failBeforeHead(504, new Error("max request duration reached"), "max request duration reached");
    else this.#client.reset(true);
  }

  #onClientClose(): void {
    const aborted = !this.#done && !(this.#responseEnded && this.#client.rstCode === H2_ERROR.NO_ERROR);
    this.#done = true;
    if (this.#queued !== undefined) this.#record.leftQueue(this.#queued);
    this.#queued = undefined;
    const upstream = this.#upstream;
    this.#upstream = undefined;
    // A request or answer cut short leaves the connection mid-message: never reused.
    upstream?.destroy();
    this.#record.finished(aborted);
  }

  #failBeforeHead(status: number, error: Error, reason: string, overloaded = false): void {
    if (this.#done || this.#client.headersSent) return;
    this.#responseEnded = true;
    this.#client.resume();
    answerOwnError(this.#context, this.#client, this.#request, this.#record, status, error, reason, overloaded ? OVERLOADED : undefined);
  }
}
