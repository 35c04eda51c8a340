// The one listener: accepts connections, hands each request to a health answer or an exchange, sweeps slow heads and idle connections, closes for the drain.
import type { Socket } from "node:net";
import type { Logger } from "pino";
import type { DrainState } from "../http/drain-state.js";
import type { HealthEndpoints } from "../http/health.js";
import type { ResponseWriter } from "../http/response-writer.js";
import { matchHealthPath } from "../http/health.js";
import { ClientConnection, type ConnectionHost } from "./http1/client-connection.js";
import type { Transaction } from "./http1/transaction.js";
import { Exchange } from "./exchange.js";
import { relaysTransferCoding } from "./forward-plan.js";
import { Http1ClientSide } from "./http1/http1-client-side.js";
import { H2ClientSide } from "./http2/h2-client-side.js";
import { faultAt } from "./fault-injection.js";
import { LocalAnswer } from "./http1/local-answer.js";
import type { RelayContext } from "./relay-context.js";
import type { RequestHead } from "./http1/request-head.js";
import { CLIENT_KEEP_ALIVE_SECONDS } from "./http1/response-head.js";
import { H2Listener } from "./http2/h2-listener.js";
import type { ForwardToHttp1, H2RoutingParts } from "./http2/h2-routing.js";
import { ParserPool } from "./http1/parser-pool.js";
import { AcceptGroup } from "./accept-group.js";
import { BurstGarbage } from "./burst-garbage.js";
import type { H2cPool } from "./http2/h2c-pool.js";
import type { UpstreamPool } from "./http1/upstream-pool.js";
import type { ConnectionLimit } from "./connection-limit.js";
import { CoarseDeadlines } from "./coarse-deadlines.js";

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
  readonly http2: Omit<H2RoutingParts, "health" | "context" | "forwardToHttp1">;
}

const EMPTY = Buffer.alloc(0);

function refuseHost(_request: RequestHead, writer: ResponseWriter, connection: ClientConnection): void {
  connection.closeAfterAnswer();
  writer.send(400, ["content-length", "0"], EMPTY);
}

/** node:http's continueExpression. */
const CONTINUE_EXPECTATION = /(?:^|\W)100-continue(?:$|\W)/i;

function refuseExpectation(_request: RequestHead, writer: ResponseWriter): void {
  writer.send(417, ["content-length", "0"], EMPTY);
}

function refuseVersion(_request: RequestHead, writer: ResponseWriter, connection: ClientConnection): void {
  connection.closeAfterAnswer();
  writer.send(505, ["content-length", "0"], EMPTY);
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
  #sweeper: NodeJS.Timeout | undefined;
  /** Made at the first HTTP/2 connection. */
  #h2: H2Listener | undefined;
  /** `--upstream-protocol h2c`: HTTP/1.1 requests go to the app over h2c too (upgrades stay HTTP/1.1). */
  readonly #h2cForHttp1: H2cPool | undefined;
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
    this.#h2cForHttp1 = parts.http2.upstreamProtocol === "h2c" ? parts.http2.h2cPool() : undefined;
    this.sockets = new AcceptGroup((socket: Socket) => this.#accept(socket));
    this.sockets.first.on("listening", () => {
      this.#sweeper ??= setInterval(() => this.sweep(), SWEEP_INTERVAL_MS).unref();
    });
  }

  get maxConnectionAgeMs(): number {
    return this.#parts.context.connectionAge?.maxAgeMs ?? 0;
  }

  get log(): Logger {
    return this.#parts.context.log;
  }

  get draining(): boolean {
    return this.#parts.drain.draining;
  }

  transactionFor(request: RequestHead, connection: ClientConnection): Transaction {
    const health = this.#parts.health;
    // Only HTTP/1.x is relayed: llhttp reads 0.9 and 2.0 request lines, which must not go upstream as 1.1.
    if (request.versionMajor !== 1) return new LocalAnswer(connection, request, refuseVersion);
    // RFC 9112 §3.2: an HTTP/1.1 request names its Host exactly once (node:http's requireHostHeader
    // covers the missing one); with two, the app and we could disagree on which is meant.
    const hosts = request.count("host");
    if (hosts > 1 || (hosts === 0 && request.versionMinor === 1)) return new LocalAnswer(connection, request, refuseHost);
    // A coding we cannot relay goes to the exchange, which refuses it (501, then the close) before
    // anything else is judged: a 417 or a health answer would keep such a connection reading on.
    if (!relaysTransferCoding(request)) return this.#exchangeFor(request, connection);
    // node:http's rule, before anything else is looked at: an HTTP/1.1 expectation other than
    // 100-continue is a 417 (the connection stays open), for the health paths too; node:http
    // hands upgrades and CONNECT to their own events, where no expectation is looked at.
    if (request.versionMinor === 1 && !request.upgrade) {
      const expectation = request.joined("expect");
      if (expectation !== undefined && !CONTINUE_EXPECTATION.test(expectation)) return new LocalAnswer(connection, request, refuseExpectation);
    }
    const healthPath = matchHealthPath(request.method, request.url);
    if (healthPath !== undefined && health.owns(healthPath)) {
      return new LocalAnswer(connection, request, (own, writer) => health.answer(healthPath, own, writer));
    }
    return this.#exchangeFor(request, connection);
  }

  /** A request for the app: relayed in the protocol it speaks. */
  #exchangeFor(request: RequestHead, connection: ClientConnection): Transaction {
    const side = new Http1ClientSide(connection, request);
    new Exchange(this.#parts.context, side, this.#h2cForHttp1 !== undefined && !request.upgrade ? this.#h2cForHttp1 : this.#parts.upstreamPool);
    return side;
  }

  /** An h2 stream to the HTTP/1.1 app: given to the h2 routing from here, above both codecs. */
  readonly #forwardToHttp1: ForwardToHttp1 = (stream, request, remoteAddress, preRead, preReadEnded) => {
    new Exchange(this.#parts.context, new H2ClientSide(stream, request, remoteAddress, preRead, preReadEnded), this.#parts.upstreamPool).start();
  };

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
    this.#h2 ??= new H2Listener({ health: this.#parts.health, context: this.#parts.context, forwardToHttp1: this.#forwardToHttp1, ...this.#parts.http2 }, HEADERS_TIMEOUT_MS, this.#parts.connectionLimit, SWEEP_INTERVAL_MS);
    this.#h2.accept(connection.socket, rest, this.now);
  }

  close(done: () => void): void {
    this.sockets.close(() => {
      clearInterval(this.#sweeper);
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
