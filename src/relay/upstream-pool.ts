// Keep-alive connections to the one upstream: the most recently used idle one first, idle ones closed before the app's own idle timeout.
import { UpstreamConnection, type UpstreamAddress, type UpstreamOwner } from "./upstream-connection.js";

export interface UpstreamPoolOptions {
  readonly address: UpstreamAddress;
  /**
   * Idle connections are closed after about this long: below the usual upstream idle timeouts
   * (Node 5 s, uvicorn 5 s), so we close first and never send on a socket the app is closing.
   */
  readonly idleTimeoutMs: number;
  /** The app sent bytes no request asked for; that connection has been closed. */
  readonly onUnaskedBytes?: () => void;
}

/** How often idle connections are looked at: one timer for the pool, none per request. */
const SWEEP_INTERVAL_MS = 1_000;

/**
 * A stack of idle connections (last in, first out: the warm ones serve, the cold ones age out)
 * and the set of all, for closing. No limit on connections: one per request in flight, as
 * undici's pool had it; `--max-concurrency` is where a limit belongs.
 */
export class UpstreamPool {
  readonly #address: UpstreamAddress;
  readonly #idleTimeoutMs: number;
  readonly #onUnaskedBytes: (() => void) | undefined;
  readonly #idle: UpstreamConnection[] = [];
  readonly #all = new Set<UpstreamConnection>();
  #sweeper: NodeJS.Timeout | undefined;
  /** A coarse clock, advanced by the sweep: going idle reads no clock. */
  #now = 0;

  constructor(options: UpstreamPoolOptions) {
    this.#address = options.address;
    this.#idleTimeoutMs = options.idleTimeoutMs;
    this.#onUnaskedBytes = options.onUnaskedBytes;
  }

  /** An idle connection (already connected) or a new one; the owner is told `onConnected` for a new one. */
  acquire(owner: UpstreamOwner): UpstreamConnection {
    let connection = this.#idle.pop();
    while (connection !== undefined && connection.socket.destroyed) connection = this.#idle.pop();
    if (connection === undefined) connection = this.#open();
    connection.assign(owner);
    return connection;
  }

  /** A connection of its own for an upgrade: never pooled, since it may become a tunnel. */
  acquireFresh(owner: UpstreamOwner): UpstreamConnection {
    const connection = this.#open();
    connection.assign(owner);
    return connection;
  }

  /** The exchange is done with a connection that may carry another request. */
  release(connection: UpstreamConnection): void {
    if (connection.socket.destroyed || connection.whenSettled(this.#makeIdle)) return;
    this.#makeIdle(connection);
  }

  readonly #makeIdle = (connection: UpstreamConnection): void => {
    connection.idleSince = this.#now;
    this.#idle.push(connection);
    this.#sweeper ??= setInterval(() => this.#sweep(), SWEEP_INTERVAL_MS).unref();
  };

  /** Closes every connection (at the end of shutdown, when no request needs one). */
  close(): void {
    for (const connection of this.#all) connection.destroy();
    this.#all.clear();
    this.#idle.length = 0;
    clearInterval(this.#sweeper);
    this.#sweeper = undefined;
  }

  #open(): UpstreamConnection {
    const connection = new UpstreamConnection(this.#address);
    this.#all.add(connection);
    connection.onGone = (gone) => this.#forget(gone);
    connection.onUnasked = this.#onUnaskedBytes;
    return connection;
  }

  #forget(connection: UpstreamConnection): void {
    this.#all.delete(connection);
    const at = this.#idle.indexOf(connection);
    if (at >= 0) this.#idle.splice(at, 1);
  }

  /** Closes connections idle for a whole timeout (measured in sweeps: closed after 3-4 s for 4 s). */
  #sweep(): void {
    this.#now += SWEEP_INTERVAL_MS;
    const limit = this.#now - this.#idleTimeoutMs + SWEEP_INTERVAL_MS;
    for (const connection of [...this.#idle]) {
      if (connection.idleSince >= 0 && connection.idleSince < limit) connection.destroy();
    }
    if (this.#idle.length === 0) {
      clearInterval(this.#sweeper);
      this.#sweeper = undefined;
    }
  }
}
