// Forwards a request to the upstream with undici's dispatch API: both bodies streamed with backpressure, hop-by-hop rules, error mapping.
import type { IncomingMessage, ServerResponse } from "node:http";
import { PassThrough } from "node:stream";
import type { Logger } from "pino";
import type { Dispatcher, Pool } from "undici";
import type { Upstream } from "../config/upstream-url.js";
import { errorCode } from "../errors.js";
import { wantsHtml, type ErrorResponder } from "./error-response.js";
import type { ProxyErrorLog } from "./proxy-error-log.js";
import type { StreamGarbage } from "./stream-garbage.js";
import { NO_LISTED_NAMES, connectionListedNames, isHopByHop } from "./hop-by-hop.js";
import { requestHeaders } from "./forwarded-headers.js";
import { upstreamErrorReason, type ProxyObserver } from "./proxy-observer.js";
import { requestIdOf } from "./request-id.js";
import { parseAbsoluteTarget } from "./request-target.js";
import { createUpstreamPool } from "../upstream-pool.js";

export interface ProxyOptions {
  readonly upstream: Upstream;
  readonly responseHeaderTimeoutMs: number;
  readonly errors: ErrorResponder;
  readonly log: Logger;
  /** Replace an upstream 5xx body with the branded page, for browser navigations only. */
  readonly interceptUpstreamErrors: boolean;
  /** Metrics, or NO_PROXY_OBSERVER. */
  readonly observer: ProxyObserver;
  /** Per-request warnings, throttled per kind (an outage must not flood the log). */
  readonly errorLog: ProxyErrorLog;
  /** Counts streamed body bytes and asks for a collection now and then. */
  readonly garbage: StreamGarbage;
}

/** A reused keep-alive socket the upstream closed just as we sent: safe to retry once if idempotent. */
const STALE_SOCKET_CODES = new Set(["ECONNRESET", "UND_ERR_SOCKET", "EPIPE"]);
const IDEMPOTENT_METHODS = new Set(["GET", "HEAD", "OPTIONS", "DELETE", "PUT", "TRACE"]);

/** Forwards every request that is not a health path. One pool, one origin. */
export class ReverseProxy {
  readonly #pool: Pool;
  readonly #options: ProxyOptions;
  readonly #pathPrefix: string;

  constructor(options: ProxyOptions) {
    this.#options = options;
    this.#pathPrefix = options.upstream.pathPrefix;
    this.#pool = createUpstreamPool(options.upstream.origin, {
      headersTimeout: options.responseHeaderTimeoutMs,
      // Below the usual upstream idle timeouts (Node 5 s, uvicorn 5 s), so we close idle sockets first.
      keepAliveTimeout: 4_000,
    });
  }

  /** Starts forwarding `req`; the response is written to `res` as the upstream answers. */
  forward(req: IncomingMessage, res: ServerResponse): void {
    const url = req.url ?? "/";
    const observer = this.#options.observer;
    // Metrics off: not even the clock is read.
    let startedAt = 0;
    if (observer.enabled) {
      observer.requestStarted();
      startedAt = performance.now();
    }
    if (url.charCodeAt(0) === 0x2f /* "/" */) {
      new Exchange(this.#pool, this.#options, req, res, this.#pathPrefix + url, startedAt, undefined).start();
      return;
    }
    // RFC 9112 §3.2.2: a server must accept absolute-form; like nginx, its authority replaces Host.
    const absolute = parseAbsoluteTarget(url);
    if (absolute) {
      new Exchange(this.#pool, this.#options, req, res, this.#pathPrefix + absolute.path, startedAt, absolute.authority).start();
      return;
    }
    if (url === "*" && req.method === "OPTIONS") {
      // A server-wide OPTIONS; undici cannot send a `*` target, and the answer is ours to give.
      res.writeHead(200, { "content-length": 0 });
      res.end();
    } else {
      failBeforeHead(this.#options, req, res, 400, new Error("request target is neither a path nor absolute-form"), "bad request target", startedAt);
    }
    if (observer.enabled) observer.requestEnded();
  }

  /** Closes idle upstream connections and waits for none to be left. */
  async close(): Promise<void> {
    await this.#pool.close();
  }

}

/** Answers a proxy-made error before any byte of the response was sent, and logs it at warn. */
function failBeforeHead(options: ProxyOptions, req: IncomingMessage, res: ServerResponse, status: number, error: Error, reason: string, startedAt: number): void {
  const requestId = requestIdOf(req);
  options.errorLog.proxyError(req, requestId, status, error, reason);
  if (res.headersSent || res.destroyed) return;
  const { observer } = options;
  if (observer.enabled) observer.responseHead(status, req.method ?? "", (performance.now() - startedAt) / 1000);
  if (status === 400) {
    // The client's mistake: no branded page, and the connection is not reused.
    const body = JSON.stringify({ error: { code: 400, message: reason, requestId } });
    res.writeHead(400, { "content-type": "application/json", "content-length": Buffer.byteLength(body), "cache-control": "no-store", connection: "close" });
    res.end(req.method === "HEAD" ? undefined : body);
    return;
  }
  options.errors.send(req, res, status, requestId);
}

/**
 * One request/response through the proxy, as an undici dispatch handler (the legacy
 * callback API: raw header arrays and no per-chunk promise, the cheapest path undici has).
 * Methods live on the prototype; per request we allocate this object and two bound listeners.
 */
class Exchange implements Dispatcher.DispatchHandler {
  readonly #pool: Pool;
  readonly #options: ProxyOptions;
  readonly #req: IncomingMessage;
  readonly #res: ServerResponse;
  readonly #path: string;
  #abortUpstream: ((reason?: Error) => void) | undefined;
  #resumeUpstream: (() => void) | undefined;
  readonly #startedAt: number;
  /** An absolute-form target's authority, sent as Host instead of the client's. */
  readonly #host: string | undefined;
  #retried = false;
  #clientGone = false;
  #ended = false;
  #answeredWithoutBody = false;
  #interceptedStatus = 0;

  constructor(pool: Pool, options: ProxyOptions, req: IncomingMessage, res: ServerResponse, path: string, startedAt: number, host: string | undefined) {
    this.#pool = pool;
    this.#options = options;
    this.#req = req;
    this.#res = res;
    this.#path = path;
    this.#startedAt = startedAt;
    this.#host = host;
  }

  start(): void {
    this.#res.once("close", this.#onClientClose);
    this.#dispatch();
  }

  #dispatch(): void {
    const req = this.#req;
    const hasBody = req.headers["content-length"] !== undefined ? req.headers["content-length"] !== "0" : req.headers["transfer-encoding"] !== undefined;
    this.#pool.dispatch(
      {
        path: this.#path,
        method: req.method as Dispatcher.HttpMethod,
        headers: requestHeaders(req, this.#host),
        // Not `req` itself: undici destroys the body stream it was given when the exchange ends,
        // and a destroyed `req` can no longer be read, so an upload the app answered early
        // (413, 401) would stall the client's connection. A pass-through is undici's to destroy.
        body: hasBody ? req.pipe(new PassThrough()) : null,
        // The client's Host is kept (it is in the headers); undici would otherwise send the upstream's.
        headersTimeout: this.#options.responseHeaderTimeoutMs,
        bodyTimeout: 0,
      },
      this,
    );
  }

  // ---- undici callbacks ----

  onConnect(abort: (reason?: Error) => void): void {
    this.#abortUpstream = abort;
    if (this.#clientGone) abort(new Error("client went away"));
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText: string): boolean {
    // 1xx other than 101 are interim: the Node server has already sent 100 Continue itself.
    if (statusCode < 200) return true;
    this.#resumeUpstream = resume;
    const res = this.#res;
    if (res.destroyed) return false;
    const { observer } = this.#options;
    if (observer.enabled) observer.responseHead(statusCode, this.#req.method ?? "", (performance.now() - this.#startedAt) / 1000);
    if (statusCode >= 500 && this.#options.interceptUpstreamErrors && wantsHtml(this.#req.headers.accept)) {
      this.#interceptedStatus = statusCode;
      return true;
    }
    const bodiless = statusCode === 204 || statusCode === 304 || this.#req.method === "HEAD";
    const headers = responseHeaders(rawHeaders, statusCode === 204);
    if (statusText) res.writeHead(statusCode, statusText, headers);
    else res.writeHead(statusCode, headers);
    if (bodiless) {
      // The status (or HEAD) says there is no body, whatever Content-Length says (RFC 9110
      // §6.4.1, §8.6: a 304 may carry the full representation's length). The response is
      // complete now; undici's complaint that the length was not met, or about stray bytes
      // after the head, comes later and concerns only the upstream connection.
      this.#answeredWithoutBody = true;
      this.#res.off("close", this.#onClientClose);
      this.#end();
      res.end();
      return true;
    }
    // Head, the body bytes that came in the same read and, for a small response, its end, all
    // go out in one writev when the tick ends: a syscall per response saved (measured ~15% of
    // CPU per request). A stream's head and first event still leave at once, this same tick.
    res.cork();
    process.nextTick(uncork, res);
    return true;
  }

  /** undici's legacy API passes the chunk written (its types say a size). */
  onBodySent(chunk: Buffer | number): void {
    this.#options.garbage.streamed(typeof chunk === "number" ? chunk : chunk.length);
  }

  onData(chunk: Buffer): boolean {
    this.#options.garbage.streamed(chunk.length);
    if (this.#interceptedStatus !== 0 || this.#answeredWithoutBody) return true; // replaced, or no body is due: drain it
    const res = this.#res;
    if (res.destroyed) return false;
    if (res.write(chunk)) return true;
    res.once("drain", this.#onClientDrain);
    return false;
  }

  onComplete(): void {
    this.#discardRestOfRequestBody();
    if (this.#answeredWithoutBody) return;
    const res = this.#res;
    this.#res.off("close", this.#onClientClose);
    this.#end();
    if (this.#interceptedStatus !== 0) {
      const requestId = requestIdOf(this.#req);
      // The page shows the request id; this line is where the operator finds it.
      this.#options.errorLog.warn("upstream error replaced by the error page", { requestId, status: this.#interceptedStatus, method: this.#req.method, url: this.#req.url });
      this.#options.errors.send(this.#req, res, this.#interceptedStatus, requestId);
      return;
    }
    res.end();
  }

  onError(error: Error): void {
    const res = this.#res;
    if (this.#answeredWithoutBody) {
      this.#options.log.debug({ method: this.#req.method, url: this.#req.url, code: errorCode(error), err: error.message }, "upstream sent a body after a bodiless response");
      return;
    }
    // We aborted it ourselves, or the client's connection is gone: nobody is left to answer.
    // (Not req.destroyed: undici destroys a request body stream on every error.)
    if (this.#clientGone || res.destroyed) {
      this.#end();
      this.#options.log.debug({ method: this.#req.method, url: this.#req.url, err: error.message }, "client went away");
      return;
    }
    const code = errorCode(error);
    if (!res.headersSent && this.#shouldRetry(code)) {
      this.#retried = true;
      this.#dispatch();
      return;
    }
    this.#res.off("close", this.#onClientClose);
    this.#end();
    this.#discardRestOfRequestBody();
    const options = this.#options;
    if (res.headersSent) {
      // Mid-body: end the client's response abruptly so it can never look complete.
      options.errorLog.warn("upstream failed mid-response", { method: this.#req.method, url: this.#req.url, code, err: error.message });
      res.destroy(error);
      return;
    }
    if (code === "UND_ERR_INVALID_ARG") {
      // undici refused what the client sent (a header it will not forward): not the upstream's fault.
      failBeforeHead(options, this.#req, res, 400, error, "request cannot be forwarded", this.#startedAt);
      return;
    }
    // Refused, reset, unresolvable, or an answer undici could not parse: all "bad gateway".
    const timedOut = code === "UND_ERR_HEADERS_TIMEOUT";
    const reason = timedOut ? "upstream response head timed out" : "upstream unavailable";
    options.observer.upstreamError(upstreamErrorReason(code));
    failBeforeHead(options, this.#req, res, timedOut ? 504 : 502, error, reason, this.#startedAt);
  }

  // ---- helpers ----

  /**
   * The exchange is over (answered, failed, or its client gone): reported once. Counting it
   * here rather than on the response's `close` event spares a listener and a closure per
   * request, which measured as most of the metrics' cost.
   */
  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    const { observer } = this.#options;
    if (observer.enabled) observer.requestEnded();
  }

  /**
   * undici is done with the request (the app answered, or failed) but the client may still be
   * sending its body: an app answering 413 or 401 before reading an upload. undici has stopped
   * reading it, and node:http only discards a body nobody began to read, so without this the
   * client's upload stalls forever on a paused socket and it never sees the answer (curl -T
   * did). Discard the rest, as node:http and nginx do for their own early answers.
   */
  #discardRestOfRequestBody(): void {
    const req = this.#req;
    if (req.complete || req.destroyed) return;
    req.unpipe();
    req.resume();
  }

  /** One retry, for a request without a body whose reused socket was found dead. */
  #shouldRetry(code: string | undefined): boolean {
    return (
      !this.#retried &&
      code !== undefined &&
      STALE_SOCKET_CODES.has(code) &&
      IDEMPOTENT_METHODS.has(this.#req.method ?? "") &&
      this.#req.headers["content-length"] === undefined &&
      this.#req.headers["transfer-encoding"] === undefined
    );
  }

  readonly #onClientDrain = (): void => {
    this.#resumeUpstream?.();
  };

  /** The client went away (or the response finished): stop the upstream if it is still going. */
  readonly #onClientClose = (): void => {
    if (this.#res.writableFinished) return;
    this.#clientGone = true;
    this.#end();
    this.#abortUpstream?.(new Error("client went away"));
  };
}

/** The upstream's headers as a flat [name, value, ...] list for writeHead, minus hop-by-hop ones (and Content-Length for a 204). */
function responseHeaders(rawHeaders: Buffer[], dropContentLength: boolean): string[] {
  let connectionValues: string[] | undefined;
  for (let index = 0; index < rawHeaders.length; index += 2) {
    const name = rawHeaders[index]!;
    if (name.length === 10 && name.toString("latin1").toLowerCase() === "connection") {
      (connectionValues ??= []).push(rawHeaders[index + 1]!.toString("latin1"));
    }
  }
  const listed = connectionValues === undefined ? NO_LISTED_NAMES : connectionListedNames(connectionValues);
  const headers: string[] = [];
  for (let index = 0; index < rawHeaders.length; index += 2) {
    const name = rawHeaders[index]!.toString("latin1");
    if (isHopByHop(name, listed) || (dropContentLength && name.length === 14 && name.toLowerCase() === "content-length")) continue;
    headers.push(name, rawHeaders[index + 1]!.toString("latin1"));
  }
  return headers;
}

function uncork(res: ServerResponse): void {
  res.uncork();
}

