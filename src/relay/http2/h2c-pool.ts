// Multiplexed h2c sessions to the app: each waits for the app's SETTINGS (closed when they do not come), takes at most its SETTINGS_MAX_CONCURRENT_STREAMS, is not reused after GOAWAY, and closes idle.
import { connect, type Socket } from "node:net";
import { AppStream } from "./app-stream.js";
import type { H2Connection, H2ConnectionHandler } from "../../h2-codec/h2-connection.js";
import { connectionOnSocket } from "../../h2-codec/socket-binding.js";
import { PORT_EVENTS } from "./stream-port.js";

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
}

/** The error code waiters get when the app's SETTINGS did not come in time (undici's for a connect that took too long: a timeout to the metrics). */
export const SETTINGS_TIMEOUT_CODE = "UND_ERR_CONNECT_TIMEOUT";

/** Streams a session takes before the app's SETTINGS (RFC 9113 §6.5.2 suggests at least 100), and at most after it. */
const INITIAL_CAPACITY = 100;
const MAX_CAPACITY = 1000;
/** The connection-level window we give the app: many streams in flight, each still held to its own 64 KiB window. */
const SESSION_WINDOW = 4 * 1024 * 1024;
const SWEEP_INTERVAL_MS = 1_000;

class PooledSession {
  readonly session: H2Connection;
  readonly socket: Socket;
  active = 0;
  capacity = INITIAL_CAPACITY;
  /** The app's SETTINGS came. */
  ready = false;
  /** False after GOAWAY or an error: no new stream goes here. */
  usable = true;
  idleSince = 0;
  readonly waiters: H2cSessionUser[] = [];
  settingsTimer: NodeJS.Timeout | undefined;
  /** The socket's own error (a refused connect): what waiters are told. */
  socketError: Error | undefined;

  constructor(session: H2Connection, socket: Socket) {
    this.session = session;
    this.socket = socket;
  }

  get hasRoom(): boolean {
    return this.usable && this.active + this.waiters.length < this.capacity;
  }
}

/** No limit on sessions: a full one makes another, as the HTTP/1.1 pool opens a connection per request; `--max-concurrency` is where a limit belongs. */
export class H2cPool {
  readonly #options: H2cPoolOptions;
  readonly #sessions: PooledSession[] = [];
  readonly #bySession = new Map<H2Connection, PooledSession>();
  /** The one fault report every stream's port of this pool shares. */
  readonly #reportFault = (error: unknown): void => this.#options.reportFault?.(error);
  #sweeper: NodeJS.Timeout | undefined;
  #now = 0;

  constructor(options: H2cPoolOptions) {
    this.#options = options;
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
    if (pooled.active === 0) pooled.idleSince = this.#now;
  }

  /** Closes every session (end of shutdown). */
  close(): void {
    for (const pooled of this.#sessions.splice(0)) {
      pooled.session.destroy();
      pooled.socket.destroy();
    }
    this.#bySession.clear();
    clearInterval(this.#sweeper);
    this.#sweeper = undefined;
  }

  #open(): PooledSession {
    const { host, port } = this.#options;
    const socket = connect({ host, port, noDelay: true });
    let pooled: PooledSession | undefined;
    const connection = connectionOnSocket(socket, this.#handler(() => pooled!), { role: "client", clock: performance.now.bind(performance), connectionWindow: SESSION_WINDOW }, (error) => {
      if (pooled !== undefined) pooled.socketError ??= error;
    });
    pooled = new PooledSession(connection, socket);
    this.#sessions.push(pooled);
    this.#bySession.set(connection, pooled);
    const opened = pooled;
    opened.settingsTimer = setTimeout(() => {
      const error = Object.assign(new Error(`upstream sent no HTTP/2 SETTINGS within ${this.#options.settingsTimeoutMs} ms`), { code: SETTINGS_TIMEOUT_CODE });
      this.#retire(opened, error);
      connection.destroy();
      socket.destroy();
    }, this.#options.settingsTimeoutMs).unref();
    socket.once("close", () => {
      this.#retire(opened, opened.socketError ?? new Error("upstream closed the connection"));
      this.#bySession.delete(connection);
    });
    this.#sweeper ??= setInterval(() => this.#sweep(), SWEEP_INTERVAL_MS).unref();
    return pooled;
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
      onClose: (error) => this.#retire(pooled(), error ?? new Error("upstream closed the connection")),
      onPeerSettings: (maxConcurrentStreams) => {
        const current = pooled();
        current.capacity = Math.max(1, Math.min(maxConcurrentStreams, MAX_CAPACITY));
        if (current.ready) return;
        current.ready = true;
        clearTimeout(current.settingsTimer);
        this.#serveWaiters(current);
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

  #retire(pooled: PooledSession, error: Error | undefined): void {
    pooled.usable = false;
    clearTimeout(pooled.settingsTimer);
    const at = this.#sessions.indexOf(pooled);
    if (at >= 0) this.#sessions.splice(at, 1);
    const waiters = pooled.waiters.splice(0);
    for (const user of waiters) {
      if (error === undefined || pooled.ready) this.acquire(user);
      else user.onSessionFailure(error);
    }
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
      clearInterval(this.#sweeper);
      this.#sweeper = undefined;
    }
  }
}
