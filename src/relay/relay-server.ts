// The one listener: accepts connections, hands each request to the routing (routing.ts), sweeps slow heads and idle connections, closes for the drain.
import type { Socket } from "node:net";
import type { Logger } from "pino";
import type { DrainState } from "../http/drain-state.js";
import type { HealthEndpoints } from "../http/health.js";
import { ClientConnection, type ConnectionHost } from "./http1/client-connection.js";
import type { Transaction } from "./http1/transaction.js";
import { faultAt } from "./fault-injection.js";
import type { RelayContext } from "./relay-context.js";
import type { RequestHead } from "./http1/request-head.js";
import { CLIENT_KEEP_ALIVE_SECONDS } from "./http1/response-head.js";
import { H2Listener } from "./http2/h2-listener.js";
import { Router, type RoutingParts } from "./routing.js";
import { ParserPool } from "./http1/parser-pool.js";
import { AcceptGroup } from "./accept-group.js";
import { BurstGarbage } from "./burst-garbage.js";
import type { UpstreamPool } from "./http1/upstream-pool.js";
import type { ConnectionLimit } from "./connection-limit.js";
import { CoarseDeadlines } from "./coarse-deadlines.js";
import type { Timers } from "../timers.js";

/** Slow clients may not hold a socket open by dribbling headers (Go's ReadHeaderTimeout, same value). */
export const HEADERS_TIMEOUT_MS = 10_000;
/**
 * Longer than the idle timeout of the load balancers in front (AWS ALB 60 s, Google's 600 s),
 * so they, not we, close idle connections: otherwise a request can race our close and fail.
 */
export const KEEP_ALIVE_TIMEOUT_MS = CLIENT_KEEP_ALIVE_SECONDS * 1000;
/** How often heads and idle connections are looked at (node:http's connectionsCheckingInterval, as we set it). */
const SWEEP_INTERVAL_MS = 1_000;

export interface RelayServerParts {
  readonly health: HealthEndpoints;
  readonly context: RelayContext;
  readonly drain: DrainState;
  /** Connections to an HTTP/1.1 app, for HTTP/1.1 clients and for h2 ones under `--upstream-protocol http1`. */
  readonly upstreamPool: UpstreamPool;
  /** --max-connections: counts the listener's client connections, both protocols (CONTRACT §18). */
  readonly connectionLimit: ConnectionLimit;
  /** The h2 side's parts beyond health, context and the HTTP/1.1 app (CONTRACT §13). */
  readonly http2: Omit<RoutingParts, "health" | "context" | "upstreamPool">;
  /** Listening sockets (accept-group.ts); a private loopback relay (the warm-up's) needs one. */
  readonly listeningSockets?: number;
}

/** What the shutdown needs of the listener. */
export interface Listener {
  /** Stops accepting; `done` runs once every connection has closed. */
  close(done: () => void): void;
  /** Closes connections with no request in progress. */
  closeIdleConnections(): void;
  /** Closes every connection, tunnels included. */
  closeAllConnections(): void;
  /** HTTP/2 clients get GOAWAY (streams in flight finish), the listener stays open: a drain without a stop (CONTRACT §14). */
  goAway(): void;
}

/** The proxy's listener: `net` sockets on one port whose connections are ClientConnections. */
export class RelayServer implements ConnectionHost, Listener {
  readonly sockets: AcceptGroup;
  readonly #parts: RelayServerParts;
  readonly #connections = new Set<ClientConnection>();
  #sweeper: unknown = undefined;
  /** Made at the first HTTP/2 connection. */
  #h2: H2Listener | undefined;
  /** Where each request of either protocol goes. */
  readonly #router: Router;
  /** Coarse time in ms, advanced by the sweep; starts at 1 so that 0 can mean "not set". */
  now = 1;
  /** The request parsers, lent to connections while they read. */
  readonly parsers = new ParserPool();
  /** One collection once a burst of connections has gone. */
  readonly #afterBurst = new BurstGarbage();
  /** Connections whose end we wrote: looked at a head's time later (a client that never closes its side). */
  readonly #closing = new CoarseDeadlines<ClientConnection>(HEADERS_TIMEOUT_MS);
  /** Connections holding a parser (every head under way among them): looked at every tick until it is parked (quiet) or gone. */
  readonly #parsersLent = new CoarseDeadlines<ClientConnection>(SWEEP_INTERVAL_MS);

  constructor(parts: RelayServerParts) {
    this.#parts = parts;
    this.#router = new Router({ health: parts.health, context: parts.context, upstreamPool: parts.upstreamPool, ...parts.http2 });
    this.sockets = new AcceptGroup((socket: Socket) => this.#accept(socket), {
      ...(parts.listeningSockets !== undefined && { count: parts.listeningSockets }),
      onFewerSockets: (error, listening, wanted) => this.log.warn({ err: error, listening, wanted }, "listening on fewer sockets"),
    });
    this.sockets.first.on("listening", () => {
      if (!this.sockets.closing) this.#sweeper ??= this.timers.setInterval(() => this.sweep(), SWEEP_INTERVAL_MS);
    });
  }

  get maxConnectionAgeMs(): number {
    return this.#parts.context.connectionAge?.maxAgeMs ?? 0;
  }

  /** The daemon's: the sweep's tick and the connections' ages. */
  get timers(): Timers {
    return this.#parts.context.timers;
  }

  get log(): Logger {
    return this.#parts.context.log;
  }

  get draining(): boolean {
    return this.#parts.drain.draining;
  }

  transactionFor(request: RequestHead, connection: ClientConnection): Transaction {
    return this.#router.transactionFor(request, connection);
  }

  forget(connection: ClientConnection): void {
    this.#connections.delete(connection);
    this.#parts.connectionLimit.forget(connection);
    this.#closing.forget(connection);
    this.#parsersLent.forget(connection);
    // As on every arrival: 10,000 closing at once made their garbage faster than a sweep came.
    this.#observeLoad();
  }

  becameIdle(connection: ClientConnection): void {
    this.#parts.connectionLimit.becameIdle(connection);
  }

  opened(connection: ClientConnection): void {
    this.#parts.connectionLimit.opened(connection);
  }

  watchClose(connection: ClientConnection): void {
    this.#closing.start(connection, this.now);
  }

  watchParser(connection: ClientConnection): void {
    this.#parsersLent.start(connection, this.now);
  }

  switchToHttp2(connection: ClientConnection, rest: Buffer): void {
    this.forget(connection);
    this.#h2 ??= new H2Listener({ context: this.#parts.context, router: this.#router }, HEADERS_TIMEOUT_MS, this.#parts.connectionLimit, SWEEP_INTERVAL_MS);
    this.#h2.accept(connection.socket, rest, this.now);
  }

  close(done: () => void): void {
    this.sockets.close(() => {
      this.timers.clearInterval(this.#sweeper);
      this.#sweeper = undefined;
      done();
    });
  }

  closeIdleConnections(): void {
    for (const connection of this.#connections) if (connection.idle || connection.closing) connection.destroy();
    // HTTP/2 connections get GOAWAY here (the drain's step after the delay): their streams finish.
    this.#h2?.closeGracefully();
  }

  goAway(): void {
    this.#h2?.closeGracefully();
  }

  closeAllConnections(): void {
    this.#parts.connectionLimit.destroyHeld();
    for (const connection of this.#connections) connection.destroy();
    this.#h2?.destroyAll();
  }

  /** Counted first: at --max-connections the oldest idle connection makes room, or the socket waits unread. */
  #accept(socket: Socket): void {
    this.#parts.connectionLimit.admit(socket, this.#start);
  }

  readonly #start = (socket: Socket): void => {
    try {
      this.#connections.add(new ClientConnection(socket, this));
      // Looked at on every arrival, not only by the sweep: a storm of 10,000 in two or three
      // seconds otherwise grew by several thousand between two collections (RssAnon).
      this.#observeLoad();
    } catch (error) {
      this.reportFault(error);
      socket.destroy();
    }
  };

  /** Client connections of both protocols and queued requests: what a burst raises and leaves. */
  #observeLoad(): void {
    this.#afterBurst.observe(this.#connections.size + (this.#h2?.size ?? 0) + (this.#parts.context.limiter?.queued ?? 0));
  }

  reportFault(error: unknown): void {
    this.#parts.context.reportFault(error);
  }

  /**
   * One tick of the coarse clock: slow heads get their 408, long-idle connections close, quiet
   * ones give their parser back. Each of these reads a deadline list from its front and stops at
   * the first not due, so an idle connection (parked, in the keep-alive deadlines only) is not
   * looked at until its keep-alive runs out. Tests call it to advance time. Returns how many
   * connections of either protocol it looked at, beside the keep-alive deadlines' front.
   */
  sweep(): number {
    this.now += SWEEP_INTERVAL_MS;
    const now = this.now;
    let looked = this.#h2?.sweep(now) ?? 0;
    // Keep-alive, both protocols: only the connections at the front of the deadlines are looked at.
    try {
      this.#parts.connectionLimit.idle.expire(now, KEEP_ALIVE_TIMEOUT_MS);
    } catch (error) {
      this.reportFault(error);
    }
    looked += this.#closing.takeDue(now, (connection) => this.#contained(connection, () => this.#closeDue(connection, now)));
    looked += this.#parsersLent.takeDue(now, (connection) => this.#contained(connection, () => this.#parserDue(connection, now)));
    try {
      this.#observeLoad();
    } catch (error) {
      this.reportFault(error);
    }
    return looked;
  }

  /** One connection's share of the sweep, inside its fault boundary: false after a fault (nothing more is timed on it). */
  #contained(connection: ClientConnection, visit: () => boolean): boolean {
    try {
      faultAt("timer");
      return visit();
    } catch (error) {
      connection.fault(error);
      return false;
    }
  }

  /** A head's time after our end was written (watchClose): false, as nothing of it is timed after this look. */
  #closeDue(connection: ClientConnection, now: number): boolean {
    // Our end is out; a client that never closes its side is not waited for past a head's time.
    if (connection.closing && now - connection.idleSince >= HEADERS_TIMEOUT_MS) connection.destroy();
    return false;
  }

  /** A connection holding a parser, every tick: a head past its time gets its 408, a quiet one parks its parser; true while it still holds one. */
  #parserDue(connection: ClientConnection, now: number): boolean {
    if (!connection.closing && connection.headStartedAt > 0 && now - connection.headStartedAt >= HEADERS_TIMEOUT_MS) connection.timeOutHead();
    return connection.parkParserIfQuiet();
  }
}
