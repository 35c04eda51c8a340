// Multiplexed h2c sessions to the app: each waits for the app's SETTINGS (closed when they do not come), takes at most its SETTINGS_MAX_CONCURRENT_STREAMS, is not reused after GOAWAY, and closes idle.
import { connect, type Socket } from "node:net";
import { AdvanceBudget } from "../../h2-codec/advance-budget.js";
import { FloodBudget, RAPID_RESET_BUDGET } from "../../h2-codec/flood-budget.js";
import { AppStream } from "./app-stream.js";
import type { H2Connection, H2ConnectionHandler } from "../../h2-codec/h2-connection.js";
import type { ReadCounter } from "../../h2-codec/connection-handler.js";
import { connectionOnSocket } from "../../h2-codec/socket-binding.js";
import { PORT_EVENTS } from "./stream-port.js";
import { NO_READING, SYSTEM_TIMERS, type Timers } from "../../timers.js";

/** Who waits for a session with room for one stream. */
export interface H2cSessionUser {
  /** A connection with a stream's worth of room, taken for this user: open the stream with {@link H2cPool.request}, give it back with {@link H2cPool.release}. */
  onSession(session: H2Connection): void;
  /** The app could not be reached (refused, reset before SETTINGS, or SETTINGS never came: {@link SETTINGS_TIMEOUT_CODE}). */
  onSessionFailure(error: Error & { code?: string }): void;
}

export interface H2cPoolOptions {
  readonly host: string;
  readonly port: number;
  /** A unix socket's path (`--upstream unix:`): connected to instead of host and port. */
  readonly path?: string;
  /** A session without streams is closed after about this long (as the HTTP/1.1 pool's idle connections). */
  readonly idleTimeoutMs: number;
  /**
   * A connection whose SETTINGS have not come this long after it was opened is closed and its
   * waiters failed: an app that accepts and says nothing (wedged, or not HTTP/2) must not hold
   * them, nor the connection, for ever.
   */
  readonly settingsTimeoutMs: number;
  /** A defect of ours in a stream's callbacks (the codec has reset that stream). */
  readonly reportFault?: (error: unknown) => void;
  /** What every session's socket reads are counted by, for their garbage (the relay's StreamGarbage). */
  readonly garbage?: ReadCounter;
  /** The daemon's clock and timers: the SETTINGS wait, the idle sweep and how long HTTP/1.1 is remembered; the runtime's by default. */
  readonly timers?: Timers;
}

/** The error code waiters get when the app's SETTINGS did not come in time (undici's for a connect that took too long: a timeout to the metrics). */
export const SETTINGS_TIMEOUT_CODE = "UND_ERR_CONNECT_TIMEOUT";

/** The error code waiters get when the app answered our preface in HTTP/1.1: it speaks HTTP/1.1 only. */
export const UPSTREAM_HTTP1_CODE = "UPSTREAM_SPEAKS_HTTP1";

/** How the app's answer to our preface begins when it speaks HTTP/1.1 only (its status line, a 400 as a rule). */
const HTTP1_STATUS_LINE = Buffer.from("HTTP/1.");
/** `<`: an HTML page without a status line (HTTP/0.9 style), never the first octet of an h2 frame we allow. */
const HTML_START = 0x3c;

/**
 * Whether the app's first octets, `chunk` after `seen` of them, are an HTTP/1.x answer: true, false, or
 * undefined while the status line's prefix is still coming.
 */
function http1Answer(chunk: Buffer, seen: number): boolean | undefined {
  if (seen === 0 && chunk.length > 0 && chunk[0] === HTML_START) return true;
  const length = Math.min(chunk.length, HTTP1_STATUS_LINE.length - seen);
  if (!chunk.subarray(0, length).equals(HTTP1_STATUS_LINE.subarray(seen, seen + length))) return false;
  return seen + length === HTTP1_STATUS_LINE.length ? true : undefined;
}

/**
 * How long `auto` remembers an app that answered in HTTP/1.1 before the next h2 stream asks it
 * again: long enough that the app sees at most one refused preface a minute, short enough that
 * an app replaced by an h2c one is heard within a minute.
 */
const HTTP1_REMEMBERED_MS = 60_000;

/** Streams a session takes before the app's SETTINGS (RFC 9113 §6.5.2 suggests at least 100), and at most after it. */
const INITIAL_CAPACITY = 100;
const MAX_CAPACITY = 1000;
/** The connection-level window we give the app: many streams in flight, each still held to its own window. */
const SESSION_WINDOW = 4 * 1024 * 1024;
/**
 * Each stream's window we give the app: what one answer may make us hold beyond what its client's
 * stream already holds while the client does not read. With the protocol's 65,535 a stalled
 * reader's stream held two windows, ours to the app and the client's own (90 stalled streams:
 * 11.5 MiB, most of what put issue 52's soak phase past 64 MiB).
 */
const STREAM_WINDOW = 16 * 1024;
/**
 * What the app's answers may make us hold, over every session, on connection credit given back as
 * the DATA arrives: streams of different clients share a session, so a client that reads nothing
 * holds its stream's 64 KiB and never the session's window (128 such streams at once before the
 * credit waits for the reader again), and the proxy still lives in a 64 MiB memory limit.
 */
const ADVANCE_LIMIT = 8 * 1024 * 1024;
const SWEEP_INTERVAL_MS = 1_000;
/** Resets a session keeps in hand beyond one per stream on it, for the streams that join before it is next counted. */
const RESET_MARGIN = 100;
const clock = performance.now.bind(performance);

class PooledSession {
  readonly session: H2Connection;
  readonly socket: Socket;
  /** Our mirror of the app's rapid-reset bucket for this session, spent by the resets we sent on it. */
  readonly resets = new FloodBudget(RAPID_RESET_BUDGET.burst, RAPID_RESET_BUDGET.perSecond, clock);
  /** The session's resetsSent already spent from `resets`. */
  resetsCounted = 0;
  active = 0;
  capacity = INITIAL_CAPACITY;
  /** The app's SETTINGS came. */
  ready = false;
  /** False after GOAWAY or an error: no new stream goes here. */
  usable = true;
  idleSince = NO_READING;
  readonly waiters: H2cSessionUser[] = [];
  settingsTimer: unknown = undefined;
  /** The socket's own error (a refused connect): what waiters are told. */
  socketError: Error | undefined;

  constructor(session: H2Connection, socket: Socket) {
    this.session = session;
    this.socket = socket;
  }

  get hasRoom(): boolean {
    const taken = this.active + this.waiters.length;
    return this.usable && taken < this.capacity && this.resets.left > taken + RESET_MARGIN;
  }
}

/** No limit on sessions: a full one makes another, as the HTTP/1.1 pool opens a connection per request; `--max-concurrency` is where a limit belongs. */
export class H2cPool {
  readonly #options: H2cPoolOptions;
  readonly #sessions: PooledSession[] = [];
  readonly #bySession = new Map<H2Connection, PooledSession>();
  readonly #advance = new AdvanceBudget(ADVANCE_LIMIT);
  /** The one fault report every stream's port of this pool shares. */
  readonly #reportFault = (error: unknown): void => this.#options.reportFault?.(error);
  #sweeper: unknown = undefined;
  #now = NO_READING;
  readonly #timers: Timers;
  /** Until when (the timers' clock) the app is taken to speak HTTP/1.1 only: it answered our preface in it. */
  #http1Until = Number.NEGATIVE_INFINITY;
  /** An h2c session of this app has had SETTINGS since HTTP/1.1 was last heard. */
  #heardH2c = false;
  /** Who waits for {@link learnProtocol}'s answer: set while a connection asks the app. */
  #learning: Array<() => void> | undefined;

  constructor(options: H2cPoolOptions) {
    this.#options = options;
    this.#timers = options.timers ?? SYSTEM_TIMERS;
  }

  /** The app answered our preface in HTTP/1.1 (within the last minute): `auto` sends it HTTP/1.1. */
  get speaksHttp1(): boolean {
    return this.#timers.now() < this.#http1Until;
  }

  /** What the app speaks is known: h2c (a session had SETTINGS) or HTTP/1.1 (heard within the last minute). */
  get knowsProtocol(): boolean {
    return this.#heardH2c || this.speaksHttp1;
  }

  /**
   * `auto`: calls `done` once what the app speaks is known, at once when it is. Otherwise one
   * connection asks (the preface): its SETTINGS say h2c (and it serves the stream that waited),
   * an HTTP/1.1 status line says {@link speaksHttp1}, a failure says nothing (the stream then
   * meets that failure on h2c, as before). The stream that waits has sent nothing to the app.
   */
  learnProtocol(done: () => void): void {
    if (this.knowsProtocol) return done();
    if (this.#learning !== undefined) {
      this.#learning.push(done);
      return;
    }
    this.#learning = [done];
    this.#open();
  }

  #endLearning(): void {
    const learning = this.#learning;
    this.#learning = undefined;
    for (const done of learning ?? []) done();
  }

  /** Gives `user` a connection with room now (synchronously) or once one is ready. */
  acquire(user: H2cSessionUser): void {
    let pooled: PooledSession | undefined;
    for (const candidate of this.#sessions) {
      if (candidate.hasRoom) {
        pooled = candidate;
        break;
      }
    }
    pooled ??= this.#open();
    if (pooled.ready) {
      pooled.active++;
      user.onSession(pooled.session);
    } else {
      pooled.waiters.push(user);
    }
  }

  /** Opens a stream on a connection `acquire` gave: its id is taken now. */
  request(session: H2Connection, fields: readonly string[], endStream: boolean): AppStream {
    const stream = session.request(fields, endStream, undefined);
    const port = new AppStream(session, stream, this.#reportFault);
    stream.user = port;
    return port;
  }

  /** `user` no longer waits (its client left, or its own deadline passed): it is never handed a session. */
  forget(user: H2cSessionUser): void {
    for (const pooled of this.#sessions) {
      const at = pooled.waiters.indexOf(user);
      if (at >= 0) {
        pooled.waiters.splice(at, 1);
        return;
      }
    }
  }

  /** A stream taken with {@link acquire} has closed. */
  release(session: H2Connection): void {
    const pooled = this.#bySession.get(session);
    if (pooled === undefined) return;
    pooled.active--;
    this.#countResets(pooled);
    if (pooled.active === 0) pooled.idleSince = this.#now;
  }

  /** Closes every session (end of shutdown). */
  close(): void {
    for (const pooled of this.#sessions.splice(0)) {
      pooled.session.destroy();
      pooled.socket.destroy();
    }
    this.#bySession.clear();
    this.#timers.clearInterval(this.#sweeper);
    this.#sweeper = undefined;
  }

  #open(): PooledSession {
    const { host, port, path } = this.#options;
    const socket = path === undefined ? connect({ host, port, noDelay: true }) : connect({ path });
    let pooled: PooledSession | undefined;
    // First of the socket's listeners: a refused connect's code (ECONNREFUSED) is known before the close retires the session, so its waiters hear it (--upstream-connect-retry reads it).
    socket.once("error", (error) => {
      if (pooled !== undefined) pooled.socketError ??= error;
    });
    const connection = connectionOnSocket(socket, this.#handler(() => pooled!), { role: "client", clock: performance.now.bind(performance), streamWindow: STREAM_WINDOW, connectionWindow: SESSION_WINDOW, advanceBudget: this.#advance, reads: this.#options.garbage }, (error) => {
      if (pooled !== undefined) pooled.socketError ??= error;
    });
    pooled = new PooledSession(connection, socket);
    this.#sessions.push(pooled);
    this.#bySession.set(connection, pooled);
    const opened = pooled;
    this.#listenForHttp1(opened);
    opened.settingsTimer = this.#timers.setTimeout(() => {
      const error = Object.assign(new Error(`upstream sent no HTTP/2 SETTINGS within ${this.#options.settingsTimeoutMs} ms`), { code: SETTINGS_TIMEOUT_CODE });
      this.#retire(opened, error);
      connection.destroy();
      socket.destroy();
    }, this.#options.settingsTimeoutMs);
    socket.once("close", () => {
      this.#retire(opened, opened.socketError ?? new Error("upstream closed the connection"));
      this.#bySession.delete(connection);
    });
    this.#sweeper ??= this.#timers.setInterval(() => this.#sweep(), SWEEP_INTERVAL_MS);
    return pooled;
  }

  /**
   * An HTTP/1.1-only app answers our preface with a status line ("HTTP/1.1 400 Bad Request"), or
   * (python's http.server, taking "PRI * HTTP/2.0" for HTTP/0.9) with a bare HTML error page;
   * the codec would read either as a frame header of some 4 MB (FRAME_SIZE_ERROR). The first
   * octets are looked at, in however many pieces they come, before the codec sees them: an
   * h2 server's first frame is a SETTINGS of a few octets, whose length's first octet is 0.
   */
  #listenForHttp1(pooled: PooledSession): void {
    let seen = 0;
    const sniff = (chunk: Buffer): void => {
      const verdict = http1Answer(chunk, seen);
      seen += chunk.length;
      if (verdict === undefined) return;
      pooled.socket.off("data", sniff);
      if (!verdict) return;
      this.#http1Until = this.#timers.now() + HTTP1_REMEMBERED_MS;
      this.#heardH2c = false;
      const { host, port } = this.#options;
      const error = Object.assign(
        new Error(`upstream ${host}:${port} answered the HTTP/2 preface in HTTP/1.1: it speaks HTTP/1.1 only, not h2c (use --upstream-protocol http1 or auto)`),
        { code: UPSTREAM_HTTP1_CODE },
      );
      this.#retire(pooled, error);
      pooled.session.destroy();
      pooled.socket.destroy();
    };
    pooled.socket.prependListener("data", sniff);
  }

  /** Each connection's handler: its streams' events go to their AppStream; its SETTINGS, GOAWAY and end to the pool. */
  #handler(pooled: () => PooledSession): H2ConnectionHandler {
    const port = (stream: { user: unknown }): AppStream | undefined => stream.user as AppStream | undefined;
    return {
      ...PORT_EVENTS,
      onHead: (stream, fields, _neverIndexed, endStream) => port(stream)?.receivedHead(fields, endStream),
      onOversizedHead: () => {},
      onReset: (stream, code) => port(stream)?.wasReset(code),
      onStreamEnd: (stream) => port(stream)?.completed(),
      onGoaway: () => this.#retire(pooled(), undefined),
      onClose: (error) => this.#retire(pooled(), error ?? pooled().socketError ?? new Error("upstream closed the connection")),
      onPeerSettings: (maxConcurrentStreams) => {
        const current = pooled();
        current.capacity = Math.max(1, Math.min(maxConcurrentStreams, MAX_CAPACITY));
        if (current.ready) return;
        current.ready = true;
        this.#heardH2c = true;
        this.#timers.clearTimeout(current.settingsTimer);
        this.#serveWaiters(current);
        this.#endLearning();
      },
      onFault: this.#reportFault,
    };
  }

  /** Hands the ready session to its waiters, as far as the app's limit goes; the rest go elsewhere. */
  #serveWaiters(pooled: PooledSession): void {
    const waiters = pooled.waiters.splice(0);
    for (const user of waiters) {
      if (pooled.usable && pooled.active < pooled.capacity) {
        pooled.active++;
        user.onSession(pooled.session);
      } else {
        this.acquire(user);
      }
    }
  }

  /**
   * Streams of many clients share a session, and each client that leaves has us reset its
   * streams: an app behind nghttp2 (node:http2, and others since CVE-2023-44487) ends a session
   * that resets more than 1,000 streams at once or 33 a second after that, with every other
   * client's stream on it (the soak's attackers did, to 3,000 honest requests in 60 s). So a
   * session takes new streams only while the resets the app still allows cover every stream on
   * it; past that it is retired for new ones and shut down once its last stream ends.
   */
  #countResets(pooled: PooledSession): void {
    const sent = pooled.session.resetsSent;
    pooled.resets.spendMany(sent - pooled.resetsCounted);
    pooled.resetsCounted = sent;
    if (pooled.usable && pooled.resets.left <= pooled.active + pooled.waiters.length + RESET_MARGIN) this.#retire(pooled, undefined);
    if (!pooled.usable && pooled.active === 0 && pooled.ready) pooled.session.shutdown();
  }

  #retire(pooled: PooledSession, error: Error | undefined): void {
    pooled.usable = false;
    this.#timers.clearTimeout(pooled.settingsTimer);
    const at = this.#sessions.indexOf(pooled);
    if (at >= 0) this.#sessions.splice(at, 1);
    const waiters = pooled.waiters.splice(0);
    for (const user of waiters) {
      if (error === undefined || pooled.ready) this.acquire(user);
      else user.onSessionFailure(error);
    }
    // A connection that ends before its SETTINGS answers what learnProtocol asked, as far as it can.
    if (!pooled.ready) this.#endLearning();
  }

  #sweep(): void {
    this.#now += SWEEP_INTERVAL_MS;
    const limit = this.#now - this.#options.idleTimeoutMs + SWEEP_INTERVAL_MS;
    for (const pooled of [...this.#sessions]) {
      if (pooled.ready && pooled.active === 0 && pooled.idleSince < limit) {
        this.#retire(pooled, undefined);
        pooled.session.shutdown();
      } else if (pooled.ready && pooled.active === 0) {
        // Idle, not yet timed out: its read and write buffers go until its next stream.
        pooled.session.releaseIdleBuffers();
      }
    }
    if (this.#sessions.length === 0) {
      this.#timers.clearInterval(this.#sweeper);
      this.#sweeper = undefined;
    }
  }
}
