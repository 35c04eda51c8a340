// How a client connection's bytes reach a parser: lent one from the pool when bytes come, reading the handle itself while it has one, giving it back while the connection waits; the rest of a read the parser stopped in, held and parsed later; and the bytes that are not the parser's (after an upgrade head, after the HTTP/2 preface, after a parse error).
import type { Socket } from "node:net";
import { type HttpParser, isPaused, type ParseError, type ParserHandler } from "./llhttp-binding.js";
import type { ParserPool } from "./parser-pool.js";
import { PAUSED_FOR_REMAINDER, PAUSED_FOR_UPGRADE, ReadGate, type RemainderHolder } from "./read-gate.js";

/** The connection a reader reads for: its parser's handler, told each read's result after its callbacks ran. */
export interface ReadOwner extends ParserHandler {
  afterRead(result: number | ParseError): void;
}

/** Where a client socket keeps its reader, for the one `data` listener every socket shares. */
const READER = Symbol("request reader");
type ReaderSocket = Socket & { [READER]: RequestReader | undefined };

/** The 24-byte preface (RFC 9113 §3.4), which llhttp reads as `PRI * HTTP/2.0` and stops after. */
const H2_PREFACE_LENGTH = 24;

/**
 * A connection starts with no parser: its first bytes come as a `data` event, a parser is lent
 * for them, and it then reads the socket's handle itself (HttpParser.consume: no Buffer or event
 * per read). park() gives it back (the handle back to the stream) once the connection only waits:
 * idle between requests, or its request queued. node:http holds one parser per connection for
 * the connection's life, which made 5,000 waiting connections cost 31 MB of native memory.
 */
export class RequestReader implements RemainderHolder {
  /** Whether the connection reads; paused on the handle or on the stream, as the parser holds it or not. */
  readonly gate: ReadGate;
  readonly #socket: Socket;
  readonly #pool: ParserPool;
  readonly #owner: ReadOwner;
  #parser: HttpParser | undefined;
  /** The parser reads the handle (consumed); false: reads come as `data` events to parse(). */
  #onHandle = false;
  /** The read parse() is in; undefined when the parser reads the handle. */
  #streamRead: Buffer | undefined;
  /** Parsing is over for good (a tunnel, HTTP/2, input read and dropped, the close). */
  #stopped = false;
  /** A read came since the sweep last looked (see parkIfQuiet). */
  #readSinceSweep = false;
  /** An upgrade head was parsed: the bytes after it, kept unparsed for a tunnel (see holdForUpgrade). */
  #upgradeRest: Buffer[] | undefined;
  /**
   * The head handler stopped the parser in a read (BODY.pause: enough requests wait parsed): the
   * rest of that read, unparsed. One buffer, the octets alone: copied out of the socket's read
   * (a view would pin all of it), a view of itself once it is parsed in part.
   */
  #remainder: Buffer | undefined;
  /** The remainder's parse is due on the next turn (see remainderDue). */
  #remainderScheduled = false;

  constructor(socket: Socket, pool: ParserPool, owner: ReadOwner) {
    this.#socket = socket;
    this.#pool = pool;
    this.#owner = owner;
    this.gate = new ReadGate(socket, false, this);
    // The listener keeps the socket flowing, so its end is seen; reads reach this only while no
    // parser reads the handle. One function for every socket, finding its reader on the socket.
    (socket as ReaderSocket)[READER] = this;
    socket.on("data", RequestReader.#socketData);
  }

  /** A throw in a parse ends this connection only. */
  static readonly #socketData = function (this: ReaderSocket, data: Buffer): void {
    const reader = this[READER] as RequestReader;
    try {
      reader.parse(data);
    } catch (error) {
      reader.#owner.onFault(error);
    }
  };

  /** Whether a parser is lent to this connection now. */
  get hasParser(): boolean {
    return this.#parser !== undefined;
  }

  /** A read that came as a `data` event: parsed (a parser lent first if there is none), then the parser takes the handle for the reads after it. */
  parse(data: Buffer): void {
    if (this.#upgradeRest !== undefined) {
      this.#upgradeRest.push(data);
      return;
    }
    this.#readSinceSweep = true;
    const parser = (this.#parser ??= this.#pool.lend(this.#owner));
    this.#streamRead = data;
    try {
      const result = parser.execute(data);
      this.#owner.afterRead(isPaused(result) ? this.#holdRest(data, result.bytesParsed) : result);
    } finally {
      this.#streamRead = undefined;
    }
    // Only while reading is open: a pause taken on the stream must be lifted on the stream.
    if (this.#parser === parser && !this.#stopped && !this.#onHandle && this.gate.open) {
      this.#onHandle = parser.consume(this.#socket, (result) => this.#onHandleRead(result));
      if (this.#onHandle) this.gate.useHandle(true);
    }
  }

  #onHandleRead(result: number | ParseError): void {
    this.#readSinceSweep = true;
    this.#owner.afterRead(isPaused(result) ? this.#holdRest(this.currentRead(), result.bytesParsed) : result);
  }

  /** Whether the unparsed rest of a read is held (the parser is stopped after a head, in the middle of a message). */
  get holdsRemainder(): boolean {
    return this.#remainder !== undefined;
  }

  /** The parser stopped after `parsed` octets of a socket's `read`: the rest is copied out and held, and reading waits for it. */
  #holdRest(read: Buffer, parsed: number): number {
    this.#remainder = Buffer.from(read.subarray(parsed));
    this.gate.pause(PAUSED_FOR_REMAINDER);
    return parsed;
  }

  /**
   * The gate's: only the remainder keeps reading paused. It is parsed on the next turn, where a
   * socket's read would come (nginx posts a pipelined request's parse the same way), never
   * inside the callbacks or answers whose resume this is.
   */
  remainderDue(): void {
    if (this.#remainderScheduled || this.#remainder === undefined) return;
    this.#remainderScheduled = true;
    setImmediate(RequestReader.#parseRemainder, this);
  }

  static readonly #parseRemainder = function (reader: RequestReader): void {
    reader.#remainderScheduled = false;
    try {
      reader.#parseHeld();
    } catch (error) {
      reader.#owner.onFault(error);
    }
  };

  /** The held remainder parsed as a read: stopped again (a view of what is left is held), or whole, and then the socket is read again. */
  #parseHeld(): void {
    const remainder = this.#remainder;
    const parser = this.#parser;
    // Paused again since it was due (a body, an answer the client does not read): the next resume makes it due again.
    if (remainder === undefined || parser === undefined || this.#stopped || !this.gate.onlyRemainder) return;
    this.#remainder = undefined;
    this.#readSinceSweep = true;
    this.#streamRead = remainder;
    try {
      let result = parser.resume(remainder);
      if (isPaused(result)) {
        this.#remainder = remainder.subarray(result.bytesParsed);
        result = result.bytesParsed;
      } else this.gate.resume(PAUSED_FOR_REMAINDER);
      this.#owner.afterRead(result);
    } finally {
      this.#streamRead = undefined;
    }
  }

  /** The read being parsed (what follows an upgrade head, or the HTTP/2 preface, is in it). */
  currentRead(): Buffer {
    return this.#streamRead ?? this.#parser?.currentRead() ?? Buffer.alloc(0);
  }

  /** Whether an upgrade head was parsed, so what follows it is kept for a tunnel. */
  get holdingForUpgrade(): boolean {
    return this.#upgradeRest !== undefined;
  }

  /** An upgrade head was parsed: reading stops, and what follows the head, in this read or later, is kept unparsed. */
  holdForUpgrade(): void {
    this.#upgradeRest = [];
    this.gate.pause(PAUSED_FOR_UPGRADE);
  }

  /** After a read that held an upgrade head: llhttp stopped after `parsed` bytes (only an upgrade head stops it short), the rest is kept. */
  keepUpgradeRest(parsed: number): void {
    const data = this.currentRead();
    if (parsed < data.length) this.#upgradeRest?.push(data.subarray(parsed));
  }

  /**
   * llhttp stopped at `PRI * HTTP/2.0` after `parsed` bytes of this read: when that was the
   * HTTP/2 preface as the connection's very first bytes (prior knowledge), what followed it.
   */
  restAfterPreface(parsed: number): Buffer | undefined {
    const rest = this.currentRead().subarray(parsed);
    return this.#socket.bytesRead - rest.length === H2_PREFACE_LENGTH ? rest : undefined;
  }

  /** The bytes of this read, when they are everything the connection has sent so far (its first read); else undefined. */
  connectionOpening(): Buffer | undefined {
    const read = this.currentRead();
    return this.#socket.bytesRead === read.length ? read : undefined;
  }

  /** The socket is another's now (a tunnel, HTTP/2): parsing stops and the bytes kept after an upgrade head are handed over. */
  handOver(): Buffer {
    this.#socket.removeListener("data", RequestReader.#socketData);
    // Not deleted: a delete would turn the socket's properties into a dictionary.
    (this.#socket as ReaderSocket)[READER] = undefined;
    this.stop();
    const rest = Buffer.concat(this.#upgradeRest ?? []);
    this.#upgradeRest = undefined;
    // None is held here: llhttp stops after an upgrade, so no head that stops it can follow one in a read.
    this.#remainder = undefined;
    return rest;
  }

  /**
   * After our end on a parse error, what the client still sends is read and dropped: its FIN
   * must be seen so the connection closes with it (left unread, it lingered until the head
   * timer and held the drain for 10 s), and closing with bytes unread would reset our answer.
   */
  discardInput(): void {
    this.#socket.removeListener("data", RequestReader.#socketData);
    this.#socket.on("data", () => {});
    this.stop();
  }

  /**
   * Gives the parser back, the handle to the stream, when nothing holds it: no read inside it (its
   * rest would follow) and reading not paused (see ReadGate.useHandle). The caller knows the
   * connection is between messages; a fresh parser then reads the next one exactly as this would.
   * False when it kept it.
   */
  park(): boolean {
    const parser = this.#parser;
    if (parser === undefined || this.#stopped || parser.executing || !this.gate.open) return false;
    if (this.#onHandle) {
      parser.unconsume();
      this.#onHandle = false;
      this.gate.useHandle(false);
    }
    this.#parser = undefined;
    this.#pool.giveBack(parser);
    return true;
  }

  /** The sweep's park: only when no read came since it last looked, so a connection in use keeps its parser. */
  parkIfQuiet(): boolean {
    if (this.#readSinceSweep) {
      this.#readSinceSweep = false;
      return false;
    }
    return this.park();
  }

  /** No more parsing on this socket (a tunnel's now, HTTP/2's, or input read and dropped): the parser is closed and reads restart on the stream. */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#remainder = undefined;
    const parser = this.#parser;
    this.#parser = undefined;
    if (parser !== undefined) {
      if (this.#onHandle) parser.unconsume();
      this.#pool.discard(parser);
    }
    this.gate.openForStream();
    this.#onHandle = false;
  }

  /** The socket closed: its parser goes back to the pool (node:http's freeParser does the same), unless a read is inside it. */
  close(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#remainder = undefined;
    const parser = this.#parser;
    this.#parser = undefined;
    if (parser === undefined) return;
    if (this.#onHandle) parser.unconsume();
    if (parser.executing) this.#pool.discard(parser);
    else this.#pool.giveBack(parser);
  }
}
