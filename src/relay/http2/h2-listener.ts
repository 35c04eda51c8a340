// The h2c side of the one listener: a node:http2 server made at the first HTTP/2 connection, its limits (CONTRACT §13), its sessions' idle close and drain.
import type { Http2Server, Http2Session, IncomingHttpHeaders, ServerHttp2Stream } from "node:http2";
import type { Socket } from "node:net";
import { routeStream, type H2RoutingParts } from "./h2-routing.js";
import { H2Request } from "./h2-request.js";
import { http2, resetStream } from "./http2-module.js";
import { scheduleConnectionAge } from "../connection-age.js";

/** The client connection preface (RFC 9113 §3.4): what llhttp stopped at, given back to nghttp2. */
export const H2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

const NGHTTP2_FLAG_END_STREAM = 0x1;
/**
 * RFC 9113 §8.2.1: CR, LF and NUL are never valid in a field value. The runtime's nghttp2 lets
 * them through (seen with node 20's), and on the way to an HTTP/1.1 app a CR LF would split the
 * head: checked here, before anything is routed.
 */
const FORBIDDEN_IN_VALUE = /[\r\n\0]/;
/**
 * What an HTTP/1.1 request line and Host can carry (RFC 9112 §3): a method token, and a target and
 * authority of visible ASCII. Checked for every stream, so that no translation to HTTP/1.1 can
 * split a request line (`:path` = `/a HTTP/1.1`); the h2c side holds to the same.
 */
const METHOD_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const VISIBLE_ASCII = /^[\x21-\x7e]*$/;
/** The header list's limit as HTTP/1.1's head (16 KiB), sized as RFC 9113 §6.5.2 counts it; nghttp2 only advertises it. */
const MAX_HEADER_LIST_BYTES = 16 * 1024;

/**
 * Limits: 100 streams at once (beyond, nghttp2 answers REFUSED_STREAM), a 16 KiB header list as
 * for HTTP/1.1, and the flood guards set on purpose rather than left to defaults: nghttp2 itself
 * bounds rapid resets and CONTINUATION runs (GOAWAY ENHANCE_YOUR_CALM), node:http2 the rest.
 */
const SERVER_OPTIONS = {
  settings: { maxConcurrentStreams: 100, maxHeaderListSize: 16 * 1024, enablePush: false },
  maxHeaderListPairs: 128,
  /** Invalid frames (empty DATA floods among them) before the session ends with GOAWAY. */
  maxSessionInvalidFrames: 100,
  /** Streams refused (above the 100) before the session ends: a client that ignores our SETTINGS. */
  maxSessionRejectedStreams: 100,
  /** Entries in one SETTINGS frame. */
  maxSettings: 32,
  maxOutstandingPings: 10,
  /** MB of nghttp2 state per session (queued frames, headers) before new streams are refused. */
  maxSessionMemory: 10,
};

interface SessionState {
  open: number;
  idleSince: number;
  /** The highest stream id node:http2 has handed us (its HEADERS complete). */
  lastStreamId: number;
  /** When the sweep first saw a header block begun and not finished (0: none), and its stream. */
  headSince: number;
  headStreamId: number;
  readonly remoteAddress: string | undefined;
  /** Its open streams, kept only with --max-connection-age: what the grace's end resets. */
  readonly streams: Set<ServerHttp2Stream> | undefined;
}

/** Owns every HTTP/2 client session; the relay server forwards its drain and sweep here. */
export class H2Listener {
  readonly #parts: H2RoutingParts;
  readonly #keepAliveMs: number;
  readonly #headTimeoutMs: number;
  readonly #sessions = new Map<Http2Session, SessionState>();
  #server: Http2Server | undefined;
  #closing = false;
  #now = 0;

  /** `headTimeoutMs`: how long a stream's header block may take, as an HTTP/1.1 head. */
  constructor(parts: H2RoutingParts, keepAliveMs: number, headTimeoutMs: number) {
    this.#parts = parts;
    this.#keepAliveMs = keepAliveMs;
    this.#headTimeoutMs = headTimeoutMs;
  }

  /** Takes a socket whose first bytes were the preface; `rest` came after it in the same read. */
  accept(socket: Socket, rest: Buffer, now: number): void {
    this.#now = now;
    socket.pause();
    socket.unshift(rest.length === 0 ? H2_PREFACE : Buffer.concat([H2_PREFACE, rest]));
    this.#serverFor().emit("connection", socket);
  }

  #serverFor(): Http2Server {
    if (this.#server !== undefined) return this.#server;
    const server = http2().createServer(SERVER_OPTIONS);
    server.on("session", (session: Http2Session) => this.#onSession(session));
    server.on("stream", (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, flags: number, rawHeaders: string[]) => this.#onStream(stream, headers, flags, rawHeaders));
    server.on("sessionError", ignore);
    this.#server = server;
    return server;
  }

  #onSession(session: Http2Session): void {
    const age = this.#parts.context.connectionAge;
    const state: SessionState = {
      open: 0,
      idleSince: this.#now,
      lastStreamId: 0,
      headSince: 0,
      headStreamId: 0,
      remoteAddress: session.socket?.remoteAddress,
      streams: age === undefined ? undefined : new Set(),
    };
    this.#sessions.set(session, state);
    session.on("error", ignore);
    const cancelAge = age === undefined ? ignore : scheduleConnectionAge(age.maxAgeMs, () => this.#ageOut(session, state, age.graceMs));
    session.on("close", () => {
      cancelAge();
      this.#sessions.delete(session);
    });
    // Opened during the drain: told at once that it is the last.
    if (this.#closing) session.close();
  }

  #onStream(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, flags: number, rawHeaders: string[]): void {
    // node:http2 emits 'stream' a tick after the HEADERS: an RST_STREAM read with them (the
    // client's, or nghttp2's for a bad DATA frame) has destroyed it by then, and taken its session,
    // so its client address. Nothing to forward; its 'error' is still to come.
    if (stream.destroyed) return void stream.on("error", ignore);
    const state = this.#sessions.get(stream.session!);
    if (state !== undefined) {
      state.open++;
      state.lastStreamId = Math.max(state.lastStreamId, stream.id ?? 0);
      state.streams?.add(stream);
      stream.once("close", () => {
        state.streams?.delete(stream);
        if (--state.open === 0) state.idleSince = this.#now;
      });
    }
    let listBytes = 0;
    for (let index = 1; index < rawHeaders.length; index += 2) {
      const value = rawHeaders[index]!;
      listBytes += rawHeaders[index - 1]!.length + value.length + 32;
      if (FORBIDDEN_IN_VALUE.test(value)) return refuseStream(stream);
    }
    const method = headers[":method"];
    const path = headers[":path"];
    const authority = headers[":authority"];
    if (typeof method !== "string" || !METHOD_TOKEN.test(method)) return refuseStream(stream);
    if ((typeof path === "string" && !VISIBLE_ASCII.test(path)) || (typeof authority === "string" && !VISIBLE_ASCII.test(authority))) return refuseStream(stream);
    if (listBytes > MAX_HEADER_LIST_BYTES) {
      // As HTTP/1.1 answers a head too large: 431, and nothing is forwarded.
      stream.on("error", ignore);
      stream.respond({ ":status": 431, "content-length": "0" }, { endStream: true });
      return;
    }
    const request = new H2Request(headers, rawHeaders, (flags & NGHTTP2_FLAG_END_STREAM) !== 0);
    try {
      routeStream(this.#parts, stream, request, state?.remoteAddress);
    } catch (error) {
      // A defect of ours costs this stream, never the process.
      this.#parts.context.reportFault(error);
      resetStream(stream, false);
    }
  }

  /**
   * --max-connection-age (CONTRACT §15): GOAWAY now (its open streams may finish; the client
   * opens a new connection for the next, which a balancer may send to another replica); after the
   * grace, what is still open is reset (RST_STREAM CANCEL) and the connection closed.
   */
  #ageOut(session: Http2Session, state: SessionState, graceMs: number): void {
    if (session.closed || session.destroyed) return;
    session.close();
    const grace = setTimeout(() => {
      for (const stream of state.streams ?? []) resetStream(stream, true);
      session.destroy();
    }, graceMs).unref();
    session.once("close", () => clearTimeout(grace));
  }

  /** The drain: every session gets GOAWAY; its streams in flight finish, then it closes. */
  closeGracefully(): void {
    this.#closing = true;
    for (const session of this.#sessions.keys()) session.close();
  }

  /** The end of the drain: whatever is left is cut. */
  destroyAll(): void {
    for (const session of this.#sessions.keys()) session.destroy();
  }

  /**
   * One tick of the relay's coarse clock: a session without streams for the keep-alive time gets
   * GOAWAY; one whose header block has been unfinished for the head timeout is ended.
   */
  sweep(now: number): void {
    this.#now = now;
    for (const [session, state] of this.#sessions) {
      if (this.#headTimedOut(session, state, now)) session.destroy();
      else if (state.open === 0 && now - state.idleSince >= this.#keepAliveMs && !session.closed) session.close();
    }
  }

  /**
   * A HEADERS frame that nghttp2 has taken (lastProcStreamID counts it from its first frame) and
   * node:http2 never made a stream of: its block is unfinished (a client stalling, or trickling
   * CONTINUATION frames), or nghttp2 refused it as malformed (then closing early costs nothing).
   * Without this, such a session looks idle, and the GOAWAY of the idle close waits on the
   * unfinished stream for ever: past the head timeout the session is destroyed (GOAWAY, then the
   * close). While other streams are open they bound the connection; the timer starts after them.
   */
  #headTimedOut(session: Http2Session, state: SessionState, now: number): boolean {
    const begun = state.open === 0 && !session.destroyed ? (session.state.lastProcStreamID ?? 0) : 0;
    if (begun <= state.lastStreamId) {
      state.headSince = 0;
      return false;
    }
    if (state.headSince === 0 || state.headStreamId !== begun) {
      state.headSince = now;
      state.headStreamId = begun;
      return false;
    }
    return now - state.headSince >= this.#headTimeoutMs;
  }
}

function ignore(): void {}

/** A malformed request (RFC 9113 §8.1.1): a stream error, never routed. */
function refuseStream(stream: ServerHttp2Stream): void {
  stream.on("error", ignore);
  stream.close(http2().constants.NGHTTP2_PROTOCOL_ERROR);
}
