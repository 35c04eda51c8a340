// The h2c side of the one listener on our own codec: its connections and limits (CONTRACT §13), each request's checks before routing, the idle close, the head deadline, the drain and the connection age.
import { peerAddressOf } from "../peer-address.js";
import type { ConnectionLimit } from "../connection-limit.js";
import type { IdleMember } from "../keep-alive-deadlines.js";
import type { Socket } from "node:net";
import { H2_ERROR } from "../../h2-codec/codec-error.js";
import type { H2Connection, H2ConnectionHandler } from "../../h2-codec/h2-connection.js";
import type { ReadCounter } from "../../h2-codec/connection-handler.js";
import type { H2Stream } from "../../h2-codec/h2-stream.js";
import { connectionOnSocket } from "../../h2-codec/socket-binding.js";
import { ClientStream } from "./client-stream.js";
import { PORT_EVENTS } from "./stream-port.js";
import type { RelayContext } from "../relay-context.js";
import { H2Request } from "./h2-request.js";
import { scheduleConnectionAge } from "../connection-age.js";
import { authorityIsValid } from "../../http/authority.js";
import { LocalBodyReads } from "./local-body-reads.js";
import { AdvanceBudget } from "../../h2-codec/advance-budget.js";
import { CoarseDeadlines } from "../coarse-deadlines.js";
import { NO_READING } from "../../timers.js";

/** The client connection preface (RFC 9113 §3.4): what llhttp stopped at, given back to the codec. */
export const H2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

/**
 * What an HTTP/1.1 request line can carry (RFC 9112 §3): a method token and a target of visible
 * ASCII. Checked for every stream (the codec has checked RFC 9113 §8 already), so that no
 * translation to HTTP/1.1 can split a request line (`:path` = `/a HTTP/1.1`); the authority gets
 * the one rule every pairing applies (src/http/authority.ts).
 */
const METHOD_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const VISIBLE_ASCII = /^[\x21-\x7e]*$/;

/** CONTRACT §13: 100 streams at once (beyond, REFUSED_STREAM), a 16 KiB header list as for HTTP/1.1. */
const MAX_CONCURRENT_STREAMS = 100;
const MAX_HEADER_LIST_BYTES = 16 * 1024;
/**
 * What clients' uploads may make us hold, over every client connection, on connection credit
 * given back as the DATA arrives: a client whose uploads the app does not read (or which wait in
 * the --max-concurrency queue) holds each stream's 64 KiB and never the 1 MiB connection window
 * its other streams need (64 such streams at once before credit waits for the reader again). One
 * bound for all clients, not one per connection, so a thousand clients add no more than one; half
 * the h2c pool's 8 MiB, because the listener's octets usually wait in the pool's windows too: the
 * two together add at most 12 MiB to what the windows alone allow, inside a 64 MiB memory limit.
 */
const ADVANCE_LIMIT = 4 * 1024 * 1024;
const clock = performance.now.bind(performance);

/** Where a client socket keeps its state, for the one close listener every socket shares. */
const STATE = Symbol("h2 connection state");
type StateSocket = Socket & { [STATE]: ConnectionState };

function stateClosed(this: StateSocket): void {
  const state = this[STATE];
  state.listener.closed(state);
}

/**
 * One client connection: its codec, its idle and head clocks, and what its codec tells it. A
 * class, its handler methods on the prototype: an object of closures per connection was about
 * 1 KiB of an idle h2c connection's heap (a dozen closures, their contexts, a copied handler).
 */
class ConnectionState implements IdleMember, H2ConnectionHandler, ReadCounter {
  readonly connection: H2Connection;
  /** When its last stream ended (0: it has streams). */
  idleSince: number;
  /** When the sweep first saw a header block begun and not finished (0: none). */
  headSince = NO_READING;
  cancelAge: () => void = ignore;

  constructor(
    readonly socket: Socket,
    readonly listener: H2Listener,
    private readonly remoteAddress: string | undefined,
    now: number,
  ) {
    this.idleSince = now;
    this.connection = connectionOnSocket(socket, this, { role: "server", clock, maxConcurrentStreams: MAX_CONCURRENT_STREAMS, maxHeaderListSize: MAX_HEADER_LIST_BYTES, advanceBudget: listener.advanceBudget, reads: this }, ignore);
  }

  /** Every socket read (the codec's ReadCounter): counted for garbage, and one on a connection without streams is looked at by the next sweep. */
  streamed(bytes: number): void {
    this.listener.garbage.streamed(bytes);
    this.listener.readArrived(this);
  }

  get idleKeepAlive(): boolean {
    const { connection } = this;
    return connection.openStreams === 0 && !connection.headerBlockPending && !connection.closed;
  }

  /** GOAWAY NO_ERROR naming the last stream processed; with none open the close follows. */
  shedIdle(): void {
    this.connection.shutdown();
  }

  /** Without streams for the keep-alive time (the listener's deadlines): GOAWAY, then the close. */
  keepAliveEnded(): void {
    this.connection.shutdown();
  }

  onHead(stream: H2Stream, fields: string[], _neverIndexed: readonly number[], endStream: boolean): void {
    this.idleSince = 0;
    this.listener.requestArrived(this.connection, stream, fields, endStream, this.remoteAddress);
  }

  onOversizedHead(stream: H2Stream): void {
    this.idleSince = 0;
    // As HTTP/1.1 answers a head too large: 431, and nothing is forwarded.
    this.connection.respond(stream, [":status", "431", "content-length", "0"], true);
  }

  onData(stream: H2Stream, source: Buffer, start: number, end: number, endStream: boolean): void {
    PORT_EVENTS.onData(stream, source, start, end, endStream);
  }

  onTrailers(stream: H2Stream, fields: string[]): void {
    PORT_EVENTS.onTrailers(stream, fields);
  }

  onWritable(stream: H2Stream): void {
    PORT_EVENTS.onWritable(stream);
  }

  onReset(stream: H2Stream, code: number): void {
    (stream.user as ClientStream | undefined)?.wasReset(code);
    this.#streamEnded();
  }

  onStreamEnd(stream: H2Stream): void {
    (stream.user as ClientStream | undefined)?.completed();
    this.#streamEnded();
  }

  onGoaway(): void {}

  onClose(): void {
    this.socket.end();
  }

  onFault(error: unknown): void {
    this.listener.reportFault(error);
  }

  #streamEnded(): void {
    if (this.connection.openStreams === 0) this.listener.becameIdle(this);
  }
}

/** Where each stream goes (src/relay/routing.ts, above both codecs): declared here so that the h2 side needs nothing of HTTP/1.1's. */
export interface StreamRouter {
  /** Routes one stream; `bodyReads`: the listener's, for a local service's body. */
  routeStream(stream: ClientStream, request: H2Request, remoteAddress: string | undefined, bodyReads: LocalBodyReads): void;
}

export interface H2ListenerParts {
  readonly context: RelayContext;
  readonly router: StreamRouter;
}

/** Owns every HTTP/2 client connection; the relay server forwards its drain and sweep here. */
export class H2Listener {
  readonly #parts: H2ListenerParts;
  readonly #headTimeoutMs: number;
  readonly #connections = new Set<ConnectionState>();
  /** The one fault report every connection and stream port of this listener shares. */
  readonly #reportFault = (error: unknown): void => this.#parts.context.reportFault(error);
  /** Bodies read for a local answer: given the head timeout, as a request's head is. */
  readonly #bodyReads: LocalBodyReads;
  /** Shared by every client connection, so many clients together stay inside it. */
  readonly advanceBudget = new AdvanceBudget(ADVANCE_LIMIT);
  /** What every client connection's socket reads are counted by, for their garbage. */
  get garbage(): ReadCounter {
    return this.#parts.context.garbage;
  }
  #closing = false;
  #now = NO_READING;
  /**
   * Connections the sweep looks at every tick: from a read while they had no stream (a head may
   * be under way), while they have streams, until a look finds them idle and gives their buffers
   * back. An idle connection is not in it: it has a place in the keep-alive deadlines only.
   */
  readonly #watched: CoarseDeadlines<ConnectionState>;

  /** `headTimeoutMs`: how long a stream's header block may take, as an HTTP/1.1 head. */
  readonly #limit: ConnectionLimit;

  /** `limit` also holds the keep-alive deadlines, which the relay server's sweep ends for both protocols; `tickMs`: the sweep's period. */
  constructor(parts: H2ListenerParts, headTimeoutMs: number, limit: ConnectionLimit, tickMs: number) {
    this.#parts = parts;
    this.#watched = new CoarseDeadlines(tickMs);
    this.#limit = limit;
    this.#headTimeoutMs = headTimeoutMs;
    this.#bodyReads = new LocalBodyReads(headTimeoutMs, this.#reportFault);
  }

  /** Open HTTP/2 client connections. */
  get size(): number {
    return this.#connections.size;
  }

  /** Takes a socket whose first bytes were the preface; `rest` came after it in the same read. */
  accept(socket: Socket, rest: Buffer, now: number): void {
    this.#now = now;
    const state = new ConnectionState(socket, this, peerAddressOf(socket), now);
    const { connection } = state;
    const age = this.#parts.context.connectionAge;
    if (age !== undefined) state.cancelAge = scheduleConnectionAge(this.#parts.context.timers, age.maxAgeMs, () => this.#ageOut(state, age.graceMs));
    this.#connections.add(state);
    // One function for every socket, finding its state on the socket; `on`: a socket closes once,
    // and `once` would wrap the listener in one more closure per connection.
    (socket as StateSocket)[STATE] = state;
    socket.on("close", stateClosed);
    this.#limit.opened(state);
    connection.receive(rest.length === 0 ? H2_PREFACE : Buffer.concat([H2_PREFACE, rest]));
    socket.resume();
    // Opened during the drain: told at once that it is the last.
    if (this.#closing) connection.shutdown();
  }

  /** Its socket closed: nothing of it is kept. */
  closed(state: ConnectionState): void {
    state.cancelAge();
    this.#connections.delete(state);
    this.#limit.forget(state);
    this.#watched.forget(state);
  }

  /** A read on `state`'s socket, before the codec takes it: with no stream open it may begin a head, so the sweep looks (one with streams is watched already). */
  readArrived(state: ConnectionState): void {
    if (state.connection.openStreams === 0 && !this.#watched.has(state)) this.#watched.start(state, this.#now);
  }

  /** Its connection's last stream ended: idle from now, for the sweep and the shedding order. */
  becameIdle(state: ConnectionState): void {
    state.idleSince = this.#now;
    this.#limit.becameIdle(state);
  }

  /** A connection's fault, reported (the one report every connection and stream port shares). */
  reportFault(error: unknown): void {
    this.#reportFault(error);
  }

  requestArrived(connection: H2Connection, stream: H2Stream, fields: string[], endStream: boolean, remoteAddress: string | undefined): void {
    // Copied: the connection decodes every block into the same list.
    const request = new H2Request(fields.slice(), endStream);
    if (!METHOD_TOKEN.test(request.method) || !VISIBLE_ASCII.test(request.url) || (request.authority !== undefined && !authorityIsValid(request.authority))) {
      // Malformed for any translation: a stream error, never routed.
      connection.reset(stream, H2_ERROR.PROTOCOL_ERROR);
      return;
    }
    const client = new ClientStream(connection, stream, this.#reportFault);
    stream.user = client;
    // Routed once the read that brought the head is done: a RST_STREAM in the same read (or a
    // malformed DATA after it) means it never reaches the app.
    queueMicrotask(() => {
      if (client.closed) return;
      try {
        this.#parts.router.routeStream(client, request, remoteAddress, this.#bodyReads);
        client.release();
      } catch (error) {
        // A defect of ours costs this stream, never the process.
        this.#parts.context.reportFault(error);
        client.reset(false);
      }
    });
  }

  /**
   * --max-connection-age (CONTRACT §15): GOAWAY now (its open streams may finish; the client
   * opens a new connection for the next, which a balancer may send to another replica); after the
   * grace, what is still open is reset (RST_STREAM CANCEL) and the connection closed.
   */
  #ageOut(state: ConnectionState, graceMs: number): void {
    if (state.connection.closed) return;
    state.connection.shutdown();
    const timers = this.#parts.context.timers;
    const grace = timers.setTimeout(() => {
      state.connection.destroy(H2_ERROR.NO_ERROR);
      state.socket.destroy();
    }, graceMs);
    state.socket.once("close", () => timers.clearTimeout(grace));
  }

  /** The drain: every connection gets GOAWAY; its streams in flight finish, then it closes. */
  closeGracefully(): void {
    this.#closing = true;
    for (const state of this.#connections) state.connection.shutdown();
  }

  /** The end of the drain: whatever is left is cut. */
  destroyAll(): void {
    for (const state of this.#connections) {
      state.connection.destroy(H2_ERROR.NO_ERROR);
      state.socket.destroy();
    }
  }

  /**
   * One tick of the relay's coarse clock: a connection whose header block has been unfinished for
   * the head timeout, while it has no other stream open, is ended (GOAWAY, then the close); a body
   * read for a local answer for as long is ended too; one found idle gives its buffers back. Only
   * the watched connections are looked at (see #watched). The keep-alive time is the deadlines'
   * (KeepAliveDeadlines, in the limit), ended by the relay server's sweep for both protocols.
   * Returns how many connections it looked at.
   */
  sweep(now: number): number {
    this.#now = now;
    this.#bodyReads.sweep(now);
    return this.#watched.takeDue(now, (state) => {
      try {
        return this.#look(state, now);
      } catch (error) {
        this.#reportFault(error);
        return false;
      }
    });
  }

  /** One watched connection's tick: true while it is to be looked at again. */
  #look(state: ConnectionState, now: number): boolean {
    const { connection } = state;
    if (connection.closed) return false;
    if (connection.openStreams === 0 && connection.headerBlockPending) {
      if (state.headSince === 0) state.headSince = now;
      else if (now - state.headSince >= this.#headTimeoutMs) {
        connection.destroy(H2_ERROR.NO_ERROR);
        state.socket.destroy();
        return false;
      }
      return true;
    }
    state.headSince = 0;
    if (connection.openStreams > 0) return true;
    if (state.idleSince === 0) {
      // Its streams ended without telling (a refusal before any): idle from now, in the deadlines;
      // its buffers go at the next look, as for one that became idle between two.
      this.becameIdle(state);
      return true;
    }
    connection.releaseIdleBuffers();
    return false;
  }
}

function ignore(): void {}
