// Keep-alive connections to the one upstream: the most recently used idle one first, idle ones closed before the app's own idle timeout.
import { faultAt } from "../fault-injection.js";
import { UpstreamConnection, type UpstreamAddress, type UpstreamOwner } from "./upstream-connection.js";
import { SYSTEM_TIMERS, type Timers } from "../../timers.js";
import { objectList } from "../object-list.js";

export interface UpstreamPoolOptions {
  readonly address: UpstreamAddress;
  /**
   * Idle connections are closed after this long, or sooner when the app says so (Keep-Alive:
   * timeout): below the usual upstream idle timeouts (Node 5 s, uvicorn 5 s), so we close first.
   */
  readonly idleTimeoutMs: number;
  /** The app sent bytes no request asked for; that connection has been closed. */
  readonly onUnaskedBytes?: () => void;
  /** A defect of ours on a connection no exchange held (closed for it). */
  readonly onFault?: (error: unknown) => void;
  /** The daemon's clock and timers: idle times and the idle sweep; the runtime's by default. */
  readonly timers?: Timers;
}

/**
 * Idle connections kept at most: a burst of thousands of concurrent requests left as many idle
 * connections, each a socket, a response parser and the app's own connection, for the idle
 * timeout. Past this the oldest idle one is closed; a busy relay reuses the newest.
 */
export const MAX_IDLE_CONNECTIONS = 256;

/** How often idle connections are looked at: one timer for the pool, none per request. */
const SWEEP_INTERVAL_MS = 1_000;

/**
 * A request that cannot be sent again if its connection turns out closed (not idempotent, or
 * its body is streamed) only goes on a connection idle for less than this: below every common
 * upstream keep-alive (gunicorn 2 s, Node and uvicorn 5 s), so it is never sent at the moment
 * the app closes an idle connection (3 POSTs in 30 got 502 there). Others reuse any idle one:
 * if the app closed it, they are sent again once.
 */
export const UNRETRIABLE_REUSE_MS = 500;

/**
 * A stack of idle connections (last in, first out: the warm ones serve, the cold ones age out)
 * and the set of all, for closing. No limit on connections: one per request in flight, as
 * undici's pool had it; `--max-concurrency` is where a limit belongs.
 */
export class UpstreamPool {
  readonly #address: UpstreamAddress;
  readonly #idleTimeoutMs: number;
  readonly #onUnaskedBytes: (() => void) | undefined;
  readonly #onFault: ((error: unknown) => void) | undefined;
  readonly #idle: UpstreamConnection[] = objectList();
  readonly #all = new Set<UpstreamConnection>();
  #sweeper: unknown = undefined;
  readonly #timers: Timers;

  constructor(options: UpstreamPoolOptions) {
    this.#address = options.address;
    this.#idleTimeoutMs = options.idleTimeoutMs;
    this.#onUnaskedBytes = options.onUnaskedBytes;
    this.#onFault = options.onFault;
    this.#timers = options.timers ?? SYSTEM_TIMERS;
  }

  /**
   * An idle connection (already connected) or a new one; the owner is told `onConnected` for a
   * new one. `retriable`: the request may be sent again if the connection proves closed, so a
   * connection idle for longer may serve it.
   */
  acquire(owner: UpstreamOwner, retriable: boolean): UpstreamConnection {
    const now = this.#timers.now();
    let connection: UpstreamConnection | undefined;
    while ((connection = this.#idle.pop()) !== undefined) {
      const idleMs = now - connection.idleSince;
      if (connection.socket.destroyed) continue;
      if (idleMs >= connection.idleLimitMs(this.#idleTimeoutMs)) {
        // Past what the app promised (Keep-Alive: timeout) or our own limit: it may be closing.
        connection.destroy();
        continue;
      }
      if (!retriable && idleMs >= UNRETRIABLE_REUSE_MS) {
        // The stack is newest first: every one below is older. They stay for retriable requests.
        this.#idle.push(connection);
        connection = undefined;
      }
      break;
    }
    connection ??= this.#open();
    connection.assign(owner);
    return connection;
  }

  /** A connection of its own for an upgrade: never pooled, since it may become a tunnel. */
  acquireFresh(owner: UpstreamOwner): UpstreamConnection {
    const connection = this.#open();
    connection.assign(owner);
    return connection;
  }

  /**
   * The exchange is done with a connection: kept for another request when `reusable` (the app
   * read the whole request and kept the connection alive), else closed, its framing being
   * mid-message.
   */
  release(connection: UpstreamConnection, reusable: boolean): void {
    if (!reusable) {
      connection.destroy();
      return;
    }
    if (connection.socket.destroyed || connection.whenSettled(this.#makeIdle)) return;
    this.#makeIdle(connection);
  }

  readonly #makeIdle = (connection: UpstreamConnection): void => {
    faultAt("pool release");
    // An idle connection reads: the app's close and any unasked bytes are seen, and the next
    // request's answer is read. An exchange pauses the app's side when its client's socket is
    // full, and resumes it on the client's drain; when the pause came in the read that ended
    // the answer, the drain came after the release, and the connection stayed paused: the next
    // request on it got no answer until the head timeout (2 minutes by default; the soak's GET
    // after the load, test/relay/upstream-pool-reading.test.ts).
    connection.resumeReading();
    connection.idleSince = this.#timers.now();
    if (this.#idle.length >= MAX_IDLE_CONNECTIONS) this.#idle.shift()?.destroy();
    this.#idle.push(connection);
    this.#sweeper ??= this.#timers.setInterval(this.#sweepIdle, SWEEP_INTERVAL_MS);
  };

  /** Closes every connection (at the end of shutdown, when no request needs one). */
  close(): void {
    for (const connection of this.#all) connection.destroy();
    this.#all.clear();
    this.#idle.length = 0;
    this.#timers.clearInterval(this.#sweeper);
    this.#sweeper = undefined;
  }

  #open(): UpstreamConnection {
    const connection = new UpstreamConnection(this.#address);
    this.#all.add(connection);
    connection.onGone = (gone) => this.#forget(gone);
    connection.onUnasked = this.#onUnaskedBytes;
    connection.onFault = this.#onFault;
    return connection;
  }

  #forget(connection: UpstreamConnection): void {
    this.#all.delete(connection);
    const at = this.#idle.indexOf(connection);
    if (at >= 0) this.#idle.splice(at, 1);
  }

  /** Closes connections idle past their limit, so their sockets and the app's are freed (acquire never takes one anyway). */
  readonly #sweepIdle = (): void => this.#sweep();

  #sweep(): void {
    const now = this.#timers.now();
    for (const connection of [...this.#idle]) {
      try {
        if (now - connection.idleSince >= connection.idleLimitMs(this.#idleTimeoutMs)) connection.destroy();
      } catch (error) {
        this.#onFault?.(error);
        connection.socket.destroy();
      }
    }
    if (this.#idle.length === 0) {
      this.#timers.clearInterval(this.#sweeper);
      this.#sweeper = undefined;
    }
  }
}
