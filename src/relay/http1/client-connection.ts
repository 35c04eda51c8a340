// One accepted client connection: parses its requests with llhttp, runs them one at a time in order, writes their answers, keeps it alive or closes it.
import type { Socket } from "node:net";
import type { Logger } from "pino";
import { BODY, isParseError, type BodyDirective, type ParsedHead, type ParseError } from "./llhttp-binding.js";
import { LENT_BEFORE_PROMPT_GIVE_BACK, type ParserPool } from "./parser-pool.js";
import { PAUSED_FOR_BODY, PAUSED_FOR_CLIENT, PAUSED_FOR_ERROR, PAUSED_FOR_PIPELINE, type ReadGate } from "./read-gate.js";
import { type ReadOwner, RequestReader } from "./request-reader.js";
import { RequestHead } from "./request-head.js";
import { RequestPipeline } from "./request-pipeline.js";
import { faultAt } from "../fault-injection.js";
import { abandonAll, type Transaction } from "./transaction.js";
import { headTimeoutAnswer, internalErrorAnswer, parseErrorAnswer, speaksNeitherProtocol } from "./connection-refusals.js";
import { scheduleConnectionAge } from "../connection-age.js";
import type { Timers } from "../../timers.js";
import type { IdleMember } from "../keep-alive-deadlines.js";
import { peerAddressOf } from "../peer-address.js";

/** Where a client socket keeps its connection, for the listeners every socket shares. */
const CLIENT = Symbol("client connection");
type ClientSocket = Socket & { [CLIENT]: ClientConnection | undefined };

function destroySocket(this: Socket): void {
  this.destroy();
}

function noAge(): void {}

/** ClientConnection's bits in its `#flags`. */
const FLAG = { lastKeepAlive: 1, closeAfter: 2, pendingErrorSilent: 4, detached: 8, ending: 16, starting: 32, faulted: 64, parserWatched: 128 } as const;

/** What the connection asks of the server that accepted it. */
export interface ConnectionHost {
  /** Makes the transaction for a parsed head (health path, proxied request, upgrade). */
  transactionFor(request: RequestHead, connection: ClientConnection): Transaction;
  /** Whether shutdown has begun: every answer then closes its connection. */
  readonly draining: boolean;
  /** The coarse clock the server's sweep advances (ms). */
  readonly now: number;
  /** The daemon's timers, for the connection's age. */
  readonly timers: Timers;
  /** --max-connection-age in ms; 0: connections live as long as keep-alive lets them. */
  readonly maxConnectionAgeMs: number;
  /** Where the connection's parser is lent from while it reads. */
  readonly parsers: ParserPool;
  forget(connection: ClientConnection): void;
  /** The connection carries nothing now: the newest idle one for --max-connections. */
  becameIdle(connection: ClientConnection): void;
  /** The connection was just accepted: idle until its first bytes. */
  opened(connection: ClientConnection): void;
  /** Our end was written: the sweep looks at it a head's time from now, and cuts it if the client has not closed. */
  watchClose(connection: ClientConnection): void;
  /** It holds a parser now: the sweep looks at it every tick (its head's time, parkParserIfQuiet) until it gives the parser back. */
  watchParser(connection: ClientConnection): void;
  /** The connection began with the HTTP/2 preface: the socket is the h2 side's now, with what followed the preface. */
  switchToHttp2(connection: ClientConnection, rest: Buffer): void;
  readonly log: Logger;
  /** A defect of ours was contained: logged (throttled) and counted. */
  reportFault(error: unknown): void;
}

/**
 * Per-connection state lives here, not per request (node's _http_server.js keeps it the same
 * way). Requests after the one being answered (pipelining) wait, parsed, in order; reading stops
 * while one waits, and the parser stops after the head that fills the line (MAX_PARSED_AHEAD):
 * the rest of that read is held as its octets and parsed once the line has emptied.
 */
export class ClientConnection implements IdleMember, ReadOwner {
  readonly socket: Socket;
  readonly remoteAddress: string | undefined;
  readonly #host: ConnectionHost;
  /** Its parser, lent while there is something to parse (see parkParser), and the bytes that are not the parser's (an upgrade's, HTTP/2's). */
  readonly #reader: RequestReader;
  /** Its requests in order: the one being answered and those parsed behind it. */
  readonly #requests = new RequestPipeline();
  readonly #reading: ReadGate;
  /**
   * The connection's yes/no states, one bit each (FLAG below) behind the accessors that follow:
   * seven boolean fields were 56 bytes of every idle connection.
   */
  #flags: number = FLAG.lastKeepAlive;
  /** A parse error to answer once the requests before it have been answered. */
  #pendingError: ParseError | undefined;
  /** When the current request's first byte came (coarse clock, which starts at 1), 0 between requests. */
  headStartedAt = 0;
  /** When the connection last became idle, or began closing (coarse clock). */
  idleSince: number;
  /** Cancels the --max-connection-age timer. */
  readonly #cancelAge: () => void;

  constructor(socket: Socket, host: ConnectionHost) {
    this.socket = socket;
    this.remoteAddress = peerAddressOf(socket);
    this.#host = host;
    this.idleSince = host.now;
    // The connection is its parser's handler and its reader's owner itself, and its socket's
    // listeners are one set of functions for every socket (below): the closures per connection
    // and their contexts were a third of an idle connection's heap.
    this.#reader = new RequestReader(socket, host.parsers, this);
    this.#reading = this.#reader.gate;
    socket.setNoDelay(true);
    (socket as ClientSocket)[CLIENT] = this;
    // Each socket event is an entry from the event loop: a throw ends this connection only.
    socket.on("drain", ClientConnection.#socketDrained);
    socket.on("end", ClientConnection.#socketEnded);
    socket.on("error", destroySocket);
    socket.on("close", ClientConnection.#socketClosed);
    this.#cancelAge = host.maxConnectionAgeMs > 0 ? scheduleConnectionAge(host.timers, host.maxConnectionAgeMs, () => this.#contained(this.#aged)) : noAge;
    // Nothing sent yet: idle, the newest.
    host.opened(this);
  }

  /** The last request parsed allows another: llhttp refuses what follows one that does not, so its parser is kept. */
  get #lastKeepAlive(): boolean {
    return (this.#flags & FLAG.lastKeepAlive) !== 0;
  }
  set #lastKeepAlive(on: boolean) {
    this.#flags = on ? this.#flags | FLAG.lastKeepAlive : this.#flags & ~FLAG.lastKeepAlive;
  }
  /** After the active answer: close instead of reading on (Connection: close, HTTP/1.0, an error, draining). */
  get #closeAfter(): boolean {
    return (this.#flags & FLAG.closeAfter) !== 0;
  }
  set #closeAfter(on: boolean) {
    this.#flags = on ? this.#flags | FLAG.closeAfter : this.#flags & ~FLAG.closeAfter;
  }
  /** The pending parse error came on the connection's first line, which carried no HTTP version: closed without an answer (speaksNeitherProtocol). */
  get #pendingErrorSilent(): boolean {
    return (this.#flags & FLAG.pendingErrorSilent) !== 0;
  }
  set #pendingErrorSilent(on: boolean) {
    this.#flags = on ? this.#flags | FLAG.pendingErrorSilent : this.#flags & ~FLAG.pendingErrorSilent;
  }
  /** The socket is a tunnel's or HTTP/2's now. */
  get #detached(): boolean {
    return (this.#flags & FLAG.detached) !== 0;
  }
  set #detached(on: boolean) {
    this.#flags = on ? this.#flags | FLAG.detached : this.#flags & ~FLAG.detached;
  }
  /** The connection's end was written: nothing more is started on it. */
  get #ending(): boolean {
    return (this.#flags & FLAG.ending) !== 0;
  }
  set #ending(on: boolean) {
    this.#flags = on ? this.#flags | FLAG.ending : this.#flags & ~FLAG.ending;
  }
  /**
   * `#startNext`'s loop is running: an answer that ends inside it (a local answer is written
   * whole, at once) leaves the next start to the loop instead of recursing, one frame per
   * pipelined request (100,000 health checks in one write overflowed the stack).
   */
  get #starting(): boolean {
    return (this.#flags & FLAG.starting) !== 0;
  }
  set #starting(on: boolean) {
    this.#flags = on ? this.#flags | FLAG.starting : this.#flags & ~FLAG.starting;
  }
  /** A defect of ours ended this connection (see fault). */
  get #faulted(): boolean {
    return (this.#flags & FLAG.faulted) !== 0;
  }
  set #faulted(on: boolean) {
    this.#flags = on ? this.#flags | FLAG.faulted : this.#flags & ~FLAG.faulted;
  }

  static readonly #socketDrained = function (this: ClientSocket): void {
    const connection = this[CLIENT] as ClientConnection;
    connection.#contained(connection.#onDrain);
  };

  static readonly #socketEnded = function (this: ClientSocket): void {
    const connection = this[CLIENT] as ClientConnection;
    connection.#contained(connection.#onEnd);
  };

  static readonly #socketClosed = function (this: ClientSocket): void {
    const connection = this[CLIENT] as ClientConnection;
    connection.#contained(connection.#onClose);
  };

  /** The parser's (ParserHandler): a message's first byte. */
  onMessageBegin(): void {
    this.headStartedAt = this.#host.now;
  }

  /** The parser's (ParserHandler): a head parsed. */
  onHead(head: ParsedHead): BodyDirective {
    return this.#onHead(head);
  }

  /** The parser's (ParserHandler): a piece of the request body. */
  onBody(chunk: Buffer): void {
    faultAt("body chunk");
    this.#requests.parsing?.onRequestBody(chunk);
  }

  /** The parser's (ParserHandler): the request ended. */
  onMessageComplete(): void {
    this.#onMessageComplete();
  }

  /** The parser's and the reader's (ParserHandler): a callback threw. */
  onFault(error: unknown): void {
    this.fault(error);
  }

  /** Between requests, with nothing owed or begun: closing it now loses nothing (--max-connections). */
  get idleKeepAlive(): boolean {
    return this.idle && !this.#ending && !this.#closeAfter && this.#requests.waiting === 0 && !this.#reader.holdsRemainder && !this.socket.destroyed;
  }

  /** Closed between requests to admit another connection at --max-connections. */
  shedIdle(): void {
    this.destroy();
  }

  /** Idle for the keep-alive time (the listener's deadlines): closed, as node:http's keepAliveTimeout closes it. */
  keepAliveEnded(): void {
    this.destroy();
  }

  /** Runs an event handler inside this connection's fault boundary. */
  #contained(handler: (this: ClientConnection) => void): void {
    try {
      faultAt("client event");
      handler.call(this);
    } catch (error) {
      this.fault(error);
    }
  }

  /**
   * The fault boundary: a defect of ours in this connection's callbacks ends its requests, never
   * the process. The one being answered gets a 502 when nothing of its answer went out (then
   * our end), else the connection is cut; every slot and upstream socket is released; the
   * fault is logged and counted once. Safe to call from anywhere, more than once.
   */
  fault(error: unknown): void {
    if (this.#faulted) return;
    this.#faulted = true;
    this.#ending = true;
    // Only the client's close is awaited from here: at most a head's time (the sweep's).
    this.idleSince = this.#host.now;
    this.#host.watchClose(this);
    this.#host.reportFault(error);
    this.#reading.pause(PAUSED_FOR_ERROR);
    const requestBegun = this.headStartedAt > 0;
    this.headStartedAt = 0;
    const { active, others } = this.#requests.takeAll();
    if (active !== undefined) this.#closeAfter = true;
    let answered = abandonAll(active, others);
    // A fault while a request was being read, before it had a transaction (its head): a 502
    // of our own answers it. With nothing begun, the client is owed nothing and gets the close.
    if (!answered && active === undefined && requestBegun && !this.socket.destroyed) {
      this.socket.write(internalErrorAnswer(), "latin1");
      answered = true;
    }
    if (answered && !this.socket.destroyed) this.socket.destroySoon();
    else this.socket.destroy();
  }

  /** Nothing in progress: no answer owed and no request begun. */
  get idle(): boolean {
    return this.#requests.active === undefined && this.headStartedAt === 0 && !this.#detached;
  }

  /** Our end was written and nothing is being answered: only the client's close is awaited. */
  get closing(): boolean {
    return this.#ending && this.#requests.active === undefined;
  }

  /** Whether the answer now being written may keep the connection open afterwards. */
  get keepAlive(): boolean {
    return this.#requests.activeKeepAlive && !this.#closeAfter && !this.#host.draining;
  }

  write(data: string | Buffer): boolean {
    return this.socket.write(data, "latin1");
  }

  pauseForBody(): void {
    this.#reading.pause(PAUSED_FOR_BODY);
  }

  resumeForBody(): void {
    this.#reading.resume(PAUSED_FOR_BODY);
  }

  /** Ends the connection abruptly (an answer cut short must never look complete). */
  destroy(): void {
    this.socket.destroy();
  }

  /** Closes after the current answer whatever the client asked (a refused upgrade, an unforwardable request). */
  closeAfterAnswer(): void {
    this.#closeAfter = true;
  }

  /** The transaction's response is complete; the next request is served once its own request has been read. */
  responseEnded(transaction: Transaction): void {
    if (this.#requests.responseEnded(transaction)) this.#advance();
  }

  /**
   * Its request waits (in the limiter's queue) and nothing more is expected from the client for
   * a while: between messages, the parser goes back to the pool (its ~6 KB of native memory with
   * it) and is lent again when bytes come. Kept when a message or a read is under way, or when
   * llhttp's state matters (after a request that closes the connection, an upgrade, an error).
   */
  parkParser(): void {
    if (this.#betweenMessages) this.#reader.park();
  }

  /**
   * The sweep's, a tick after the parser was lent and every tick after: parks it when nothing was
   * read since the last look (idle, or an answer slow to come). True while it still holds one
   * (looked at again next tick: a head under way always has one, so its time is looked at too);
   * false once it holds none, or never will give it back this way (detached, faulted: the parser
   * goes at the close).
   */
  parkParserIfQuiet(): boolean {
    if (this.#betweenMessages) this.#reader.parkIfQuiet();
    if (this.#reader.hasParser && !this.#detached && !this.#faulted) return true;
    this.#flags &= ~FLAG.parserWatched;
    return false;
  }

  get #betweenMessages(): boolean {
    return this.#requests.parsing === undefined && this.headStartedAt === 0 && this.#lastKeepAlive && !this.#reader.holdingForUpgrade && this.#pendingError === undefined && !this.#closeAfter && !this.#ending && !this.#detached && !this.#faulted;
  }

  /**
   * --max-connection-age (CONTRACT §15): an idle connection is closed now; a busy one closes after
   * its current answer, which says `Connection: close` unless its head is out already.
   */
  #aged(): void {
    if (this.#detached || this.#ending) return;
    this.#closeAfter = true;
    if (this.idle) this.#end();
  }

  /** The socket is the tunnel's now: no more parsing; the bytes read after the upgrade head are handed over. */
  detach(): Buffer {
    this.#detached = true;
    // A tunnel follows --idle-timeout; HTTP/2 has its own age (h2-listener.ts).
    this.#cancelAge();
    this.socket.removeListener("drain", ClientConnection.#socketDrained);
    return this.#reader.handOver();
  }

  /** A client that half-closes while an answer is owed is gone, as node:http treats it; an idle one gets our end once what was written is out. */
  #onEnd(): void {
    if (this.#requests.active === undefined && this.#requests.waiting === 0 && !this.#reader.holdsRemainder) this.socket.end();
    else this.socket.destroy();
  }

  /** The reader's (ReadOwner): what follows the parse of one read: an error answered, an upgrade's rest kept, the heads it completed started. */
  afterRead(result: number | ParseError): void {
    // A read lends a parser: from now the sweep looks at it until it is given back (one bit, not a lookup, per read).
    if ((this.#flags & FLAG.parserWatched) === 0 && this.#reader.hasParser) {
      this.#flags |= FLAG.parserWatched;
      this.#host.watchParser(this);
    }
    if (isParseError(result)) {
      if (result.code === "HPE_PAUSED_H2_UPGRADE" && this.#switchedToHttp2(result)) return;
      this.#onParseError(result);
    } else if (this.#reader.holdingForUpgrade) this.#reader.keepUpgradeRest(result);
    // Heads parsed in this read start only now: a request whose bytes end in a parse error
    // within the same read never reaches the app.
    this.#startNext();
    this.#pauseWhileWaiting();
  }

  /**
   * After a start: reading stops while parsed requests wait. Except when the one next in line
   * waits for its own body in the held remainder: that is parsed before it starts, so a body that
   * breaks there is answered 400 after the earlier answers and never reaches the app, as within
   * one read.
   */
  #pauseWhileWaiting(): void {
    if (this.#requests.waiting > 0 && !this.#bodyHeld) this.#reading.pause(PAUSED_FOR_PIPELINE);
    else this.#parkUnderPressure();
  }

  /** The one next in line is the one whose body is parsed, and the rest of it is in the held remainder. */
  get #bodyHeld(): boolean {
    return this.#reader.holdsRemainder && this.#requests.onlyParsingWaits;
  }

  /**
   * With many parsers lent (a burst of connections that each sent a request and went quiet),
   * one whose answer is done gives its parser back now instead of at the next quiet sweep: 10,000
   * clients arriving within a sweep held 10,000 parsers (about 6 KB of native memory each, which
   * glibc kept after they were freed), enough for the OOM killer in 64 MiB. Below the mark a
   * busy keep-alive connection keeps its parser between requests, as before.
   */
  #parkUnderPressure(): void {
    if (this.#host.parsers.lent > LENT_BEFORE_PROMPT_GIVE_BACK && this.idleKeepAlive) this.parkParser();
  }

  /** Prior knowledge: the preface was the connection's very first bytes; then the socket goes to the h2 side. */
  #switchedToHttp2(error: ParseError): boolean {
    const rest = this.#reader.restAfterPreface(error.bytesParsed);
    if (rest === undefined) return false;
    this.headStartedAt = 0;
    // Nothing of this object stays on the socket (its parser went back in detach): an idle h2
    // connection held its HTTP/1.1 reader, pipeline and handlers through these listeners. Only
    // ours come off (the limit counts the socket's close with a listener of its own), newest
    // first: V8 then undoes each property's addition to the socket's listener table instead of
    // turning it into a dictionary (about 370 bytes per h2 connection). The h2 side puts its own
    // error and close listeners on.
    this.socket.removeListener("close", ClientConnection.#socketClosed);
    this.socket.removeListener("error", destroySocket);
    this.detach();
    this.socket.removeListener("end", ClientConnection.#socketEnded);
    // Not deleted: a delete would turn the socket's properties into a dictionary.
    (this.socket as ClientSocket)[CLIENT] = undefined;
    this.#host.switchToHttp2(this, rest);
    return true;
  }

  #onHead(head: ParsedHead): BodyDirective {
    // After a fault the parser may still be in the read that had it: nothing more starts.
    if (this.#faulted) return BODY.skip;
    faultAt("head parsed");
    this.headStartedAt = 0;
    const request = new RequestHead(head);
    const transaction = this.#host.transactionFor(request, this);
    this.#requests.parsed(transaction, request.keepAlive);
    this.#lastKeepAlive = request.keepAlive;
    if (request.upgrade) this.#reader.holdForUpgrade();
    // Enough wait parsed: llhttp stops the read after this head, and its rest waits as octets.
    else if (this.#requests.full) return BODY.pause;
    return BODY.parse;
  }

  #onMessageComplete(): void {
    const transaction = this.#requests.takeParsing();
    if (transaction === undefined) return;
    transaction.onRequestEnd();
    if (this.#requests.requestEnded(transaction)) this.#advance();
  }

  #onParseError(error: ParseError): void {
    // The request being read is cut: if it was already forwarded, its exchange fails with it.
    const broken = this.#requests.takeParsing();
    // Nothing after a parse error is read: the connection ends with its answer.
    this.#reading.pause(PAUSED_FOR_ERROR);
    if (broken !== undefined && !this.#requests.drop(broken) && broken === this.#requests.active) {
      broken.onClientGone();
      this.socket.destroy();
      return;
    }
    this.#pendingError = error;
    const opening = this.#reader.connectionOpening();
    this.#pendingErrorSilent = opening !== undefined && speaksNeitherProtocol(opening);
    this.#advance();
  }

  #startNext(): void {
    if (this.#starting) return;
    this.#starting = true;
    try {
      // An answer that ended the connection ends it for everything pipelined behind it too.
      while (this.#requests.active === undefined && !this.#ending) {
        // A client that pipelines without reading gets no more answers until it reads: what
        // is written for it stays within the socket's high-water mark, not its whole pipeline.
        if (this.socket.writableNeedDrain) {
          this.#reading.pause(PAUSED_FOR_CLIENT);
          return;
        }
        // Its body is in the held remainder: parsed first (see #pauseWhileWaiting), which starts it.
        if (this.#bodyHeld) {
          this.#reading.resume(PAUSED_FOR_PIPELINE);
          return;
        }
        const next = this.#requests.next();
        if (next === undefined) {
          if (this.#pendingError !== undefined) this.#answerParseError(this.#pendingError);
          return;
        }
        if (this.#requests.waiting === 0) this.#reading.resume(PAUSED_FOR_PIPELINE);
        next.start();
      }
    } finally {
      this.#starting = false;
    }
  }

  /** The client read what was written: the active answer streams on, or the pipeline moves on. */
  #onDrain(): void {
    const active = this.#requests.active;
    if (active !== undefined) {
      active.onClientDrain();
      return;
    }
    if (!this.#reading.has(PAUSED_FOR_CLIENT)) return;
    this.#reading.resume(PAUSED_FOR_CLIENT);
    this.#startNext();
    this.#pauseWhileWaiting();
  }

  /** Moves on once the active transaction's request and response have both ended. */
  #advance(): void {
    // Draining: the answer said `Connection: close`, so pipelined requests behind it are not
    // served, nor is a parse error behind them answered. Otherwise the requests before a parse
    // error are served, then its answer ends the connection.
    const closing = this.#closeAfter || !this.#requests.activeKeepAlive || this.#host.draining;
    if (!this.#requests.activeFinished) {
      // Answered before its body ended (a refusal, an early 413): a connection that closes anyway
      // gets our end now, as node:http does, not after a body that may never come; what still
      // arrives is read and dropped until the client closes (closing with it unread would reset).
      if (closing && this.#requests.activeAnswered) this.#end();
      return;
    }
    this.#requests.finishActive();
    if (closing) {
      this.#end();
      return;
    }
    this.idleSince = this.#host.now;
    this.#host.becameIdle(this);
    this.#startNext();
    this.#parkUnderPressure();
  }

  #end(): void {
    // Again once the answer ended, for one answered before its body came: only from then is
    // nothing but the client's close awaited (see the sweep's #closeDue).
    this.#host.watchClose(this);
    if (this.#ending) return;
    this.#ending = true;
    this.idleSince = this.#host.now;
    this.socket.end();
  }

  /** node:http's answers to what its parser refused: 400, 431 for a head too large, 413 for chunk extensions. */
  #answerParseError(error: ParseError): void {
    this.#pendingError = undefined;
    if (this.#endWith(this.#pendingErrorSilent ? "" : parseErrorAnswer(error.code))) this.#reader.discardInput();
  }

  /** Slowloris: a head not complete within the header timeout gets node:http's 408, then the close. */
  timeOutHead(): void {
    this.headStartedAt = 0;
    if (this.#requests.active !== undefined) {
      this.socket.destroy();
      return;
    }
    this.#endWith(headTimeoutAnswer());
  }

  /** Our last answer, then our end: nothing more is started or read for the parser. False when the socket is gone already. */
  #endWith(answer: string): boolean {
    this.headStartedAt = 0;
    this.#ending = true;
    this.idleSince = this.#host.now;
    this.#host.watchClose(this);
    if (this.socket.destroyed) return false;
    this.socket.end(answer, "latin1");
    return true;
  }

  #onClose(): void {
    // First, so that a fault below still leaves nothing of this connection behind.
    this.#host.forget(this);
    this.#cancelAge();
    this.#reader.close();
    const { active, others } = this.#requests.takeAll();
    active?.onClientGone();
    for (const transaction of others) transaction.onClientGone();
  }
}

