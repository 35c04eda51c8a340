// The one wrapper of the runtime's llhttp binding (the parser node:http drives): strict, typed, with the >32-header flush folded in.
import type * as HttpCommon from "node:_http_common";
import type { HTTPParser } from "node:_http_common";
import type { Socket } from "node:net";

/**
 * The largest request or response head, as node:http allows by default (--max-http-header-size):
 * a longer one is an HPE_HEADER_OVERFLOW error (431 for a request).
 */
/** The binding, loaded at first use rather than at import: it cannot go into a startup snapshot (sea-config.json useSnapshot). */
let httpCommon: typeof HttpCommon | undefined;
const binding = (): typeof HttpCommon => (httpCommon ??= process.getBuiltinModule("node:_http_common") as typeof HttpCommon);

export const MAX_HEAD_BYTES = 16 * 1024;

/**
 * What kOnHeadersComplete reports, with the headers and target of a long head reassembled. One
 * object per parser, filled again for each message: it is valid only while `onHead` runs (keep
 * its fields, never it; the `headers` array is each message's own).
 */
export interface ParsedHead {
  readonly versionMajor: number;
  readonly versionMinor: number;
  /** Flat `[name, value, ...]`, names as sent. */
  readonly headers: string[];
  /** The request's method (requests only). */
  readonly method: string;
  /** The request target as sent (requests only). */
  readonly url: string;
  /** The status code (responses only). */
  readonly statusCode: number;
  readonly statusMessage: string;
  /** Upgrade requested (request) or granted (a 101 response); CONNECT counts for requests. */
  readonly upgrade: boolean;
  /** Whether the connection may carry another message after this one. */
  readonly keepAlive: boolean;
}

/** llhttp's code for a read stopped by BODY.pause: not an error of the input. */
const PAUSED = "HPE_PAUSED";

/**
 * Nothing to parse, with memory behind it: the binding takes a buffer without memory (a null
 * pointer) for finish(), and an empty resume must run llhttp on instead.
 */
const NOTHING = Buffer.alloc(1).subarray(1);

/** No headers: what a parser's head holds between messages. */
const NO_HEADERS: string[] = [];

/** A parser's one ParsedHead, its fields set per message. */
class HeadFields implements ParsedHead {
  versionMajor = 0;
  versionMinor = 0;
  headers: string[] = NO_HEADERS;
  method = "";
  url = "";
  statusCode = 0;
  statusMessage = "";
  upgrade = false;
  keepAlive = false;

  forget(): void {
    this.headers = NO_HEADERS;
    this.url = "";
    this.statusMessage = "";
  }
}

/**
 * How a head handler tells llhttp about the body: parse it, none follows (HEAD's answer), the rest
 * is a tunnel, or parse it but stop the read after this head (llhttp's HPE_PAUSED: `execute`
 * returns that error with the head's end as bytesParsed, and `resume` parses on from there).
 */
export const BODY = { parse: 0, skip: 1, upgrade: 2, pause: 21 } as const;
export type BodyDirective = (typeof BODY)[keyof typeof BODY];

/** The callbacks of one connection's messages, called synchronously inside `execute`. */
export interface ParserHandler {
  /** A message's first byte was parsed (a request's head timeout starts here). */
  onMessageBegin?(): void;
  onHead(head: ParsedHead): BodyDirective;
  onBody(chunk: Buffer): void;
  onMessageComplete(): void;
  /**
   * A callback threw (a defect of ours): its connection's fault boundary. The parser goes on
   * with the read it is in, so the handler must ignore what follows.
   */
  onFault(error: unknown): void;
}

/** The handler of a parser nobody holds: nothing reaches it, and nothing it could be handed starts. */
const NO_HANDLER: ParserHandler = {
  onHead: () => BODY.skip,
  onBody() {},
  onMessageComplete() {},
  onFault() {},
};

/** A socket's stream handle as consume() sees it; `_consumed` is node:http's own mark of a handle a parser reads. */
interface ConsumableHandle {
  readonly isStreamBase?: boolean;
  _consumed?: boolean;
}

/** A parse error: llhttp's `HPE_*` code, its reason, and how far it got. */
export interface ParseError {
  readonly code: string;
  readonly reason: string;
  readonly bytesParsed: number;
}

/**
 * One llhttp parser: it moves on to the next message by itself (keep-alive, pipelining), and can
 * be lent to another connection (see reuse). No lenient flag: bare LF, obs-fold, CL with TE,
 * spaces before the colon and the rest are errors, as node:http's strict default makes them.
 */
export class HttpParser {
  readonly #parser: HTTPParser;
  readonly #type: number;
  /** Whose messages these are; another connection's after reuse(). The callbacks read it each time. */
  #handler: ParserHandler;
  /** The handle this parser reads (see consume), and where its reads report. */
  #handle: ConsumableHandle | undefined;
  #onRead: ((result: number | ParseError) => void) | undefined;
  /** A callback of the read being parsed is running: llhttp is inside that read. */
  #executing = false;
  /** A head longer than 32 fields comes in pieces (kOnHeaders) before kOnHeadersComplete. */
  #pendingHeaders: string[] = [];
  #pendingUrl = "";
  /** The head handed to onHead, filled in place per message: no object per head. */
  readonly #head = new HeadFields();

  constructor(kind: "request" | "response", handler: ParserHandler) {
    const { HTTPParser, methods } = binding();
    const parser = new HTTPParser();
    this.#type = kind === "request" ? HTTPParser.REQUEST : HTTPParser.RESPONSE;
    parser.initialize(this.#type, {}, MAX_HEAD_BYTES, HTTPParser.kLenientNone);
    this.#handler = handler;
    // Every callback is an entry from a native read into the relay: a throw in one must reach
    // the connection's boundary, never the native parser (a consumed one rethrows it into
    // uncaughtException, and the process ends). try/catch costs nothing until something throws.
    // Installed once per parser: they find the handler of the moment through `this`.
    if (handler.onMessageBegin !== undefined) {
      parser[HTTPParser.kOnMessageBegin] = () => {
        this.#executing = true;
        try {
          this.#handler.onMessageBegin?.();
        } catch (error) {
          this.#handler.onFault(error);
        }
      };
    }
    parser[HTTPParser.kOnHeaders] = (headers: string[], url: string) => {
      this.#executing = true;
      for (const item of headers) this.#pendingHeaders.push(item);
      this.#pendingUrl += url;
    };
    parser[HTTPParser.kOnHeadersComplete] = (
      versionMajor: number,
      versionMinor: number,
      headers: string[] | undefined,
      method: number | undefined,
      url: string | undefined,
      statusCode: number | undefined,
      statusMessage: string | undefined,
      upgrade: boolean,
      keepAlive: boolean,
    ): number => {
      this.#executing = true;
      // Each comes whole here, or in pieces before (node:http's parserOnHeadersComplete checks them apart).
      let allHeaders = headers;
      let target = url;
      if (allHeaders === undefined) {
        allHeaders = this.#pendingHeaders;
        this.#pendingHeaders = [];
      }
      if (!target) {
        target = this.#pendingUrl;
        this.#pendingUrl = "";
      }
      try {
        const head = this.#head;
        head.versionMajor = versionMajor;
        head.versionMinor = versionMinor;
        head.headers = allHeaders;
        head.method = method === undefined ? "" : (methods[method] ?? "");
        head.url = target ?? "";
        head.statusCode = statusCode ?? 0;
        head.statusMessage = statusMessage ?? "";
        head.upgrade = upgrade;
        head.keepAlive = keepAlive;
        return this.#handler.onHead(head);
      } catch (error) {
        this.#handler.onFault(error);
        return BODY.skip;
      } finally {
        // A parser kept between messages (an idle keep-alive connection's) must not keep the last head's strings.
        this.#head.forget();
      }
    };
    parser[HTTPParser.kOnBody] = (chunk: Buffer) => {
      this.#executing = true;
      try {
        this.#handler.onBody(chunk);
      } catch (error) {
        this.#handler.onFault(error);
      }
    };
    parser[HTTPParser.kOnMessageComplete] = () => {
      this.#executing = true;
      // Trailers come through kOnHeaders too: they are not relayed, and must not become the next
      // head's fields or target (a chunked request's trailer turned the next `GET /` into `GET //`).
      if (this.#pendingHeaders.length > 0) this.#pendingHeaders = [];
      this.#pendingUrl = "";
      try {
        this.#handler.onMessageComplete();
      } catch (error) {
        this.#handler.onFault(error);
      }
    };
    this.#parser = parser;
  }

  /**
   * Another connection's parser from now on: llhttp starts afresh (initialize, as node:http's
   * parser free list does) and calls `handler`. Only for a parser no handle is consumed by and
   * no read is inside.
   */
  reuse(handler: ParserHandler): void {
    this.#parser.initialize(this.#type, {}, MAX_HEAD_BYTES, binding().HTTPParser.kLenientNone);
    this.#handler = handler;
    this.#handle = undefined;
    this.#onRead = undefined;
    this.#pendingHeaders = [];
    this.#pendingUrl = "";
  }

  /** Kept for later (a free list): it no longer calls, nor keeps alive, the connection it was lent to. */
  release(): void {
    this.#handler = NO_HANDLER;
    this.#onRead = undefined;
  }

  /**
   * Whether llhttp is inside a read: a callback of it is running (then the parser can neither be
   * given back nor let go of its handle, since the rest of the read follows the callback).
   */
  get executing(): boolean {
    return this.#executing;
  }

  /** Parses `data`; returns the bytes consumed (fewer than given after an upgrade) or the error. */
  execute(data: Buffer): number | ParseError {
    try {
      return parseResult(this.#parser.execute(data));
    } finally {
      this.#executing = false;
    }
  }

  /**
   * Parses on after a read that BODY.pause stopped, from the end of that head: `rest` is what
   * followed it (possibly nothing: a request without a body ends only when llhttp runs on).
   */
  resume(rest: Buffer): number | ParseError {
    this.#parser.resume();
    return this.execute(rest.length > 0 ? rest : NOTHING);
  }

  /**
   * Lets the binding read `socket` itself, as node:http's server does: each read goes from the
   * kernel into one shared native buffer and straight into llhttp, with no Buffer, stream push
   * or `data` event per read. `onRead` gets each read's result, after its callbacks ran. False
   * when the socket has no stream handle to read (then feed `execute` from `data` events).
   */
  consume(socket: Socket, onRead: (result: number | ParseError) => void): boolean {
    const handle = (socket as unknown as { _handle?: ConsumableHandle | null })._handle;
    if (handle?.isStreamBase !== true || handle._consumed === true) return false;
    this.#handle = handle;
    this.#onRead = onRead;
    // Once per parser, like the callbacks: a parser lent again keeps it.
    this.#parser[binding().HTTPParser.kOnExecute] ??= (result: number | Error) => {
      this.#executing = false;
      try {
        this.#onRead?.(parseResult(result));
      } catch (error) {
        this.#handler.onFault(error);
      }
    };
    handle._consumed = true;
    this.#parser.consume(handle);
    return true;
  }

  /** Gives the socket's reads back to its stream (a tunnel, or a connection that gives its parser back, reads them from `data` events). */
  unconsume(): void {
    this.#parser.unconsume();
    // node:http's flag on the handle, which consume() checks: the handle may be consumed again.
    if (this.#handle !== undefined) this.#handle._consumed = false;
    this.#handle = undefined;
    this.#onRead = undefined;
  }

  /** A copy of the read being parsed: after an upgrade head, what follows it. */
  currentRead(): Buffer {
    return this.#parser.getCurrentBuffer();
  }

  /** The connection ended: completes a body delimited by the close; an error when a message was cut short. */
  finish(): ParseError | undefined {
    let result: Error | undefined;
    try {
      result = this.#parser.finish();
    } finally {
      this.#executing = false;
    }
    if (result === undefined) return undefined;
    const error = result as Error & { code?: string; reason?: string };
    return { code: error.code ?? "HPE_UNKNOWN", reason: error.reason ?? error.message, bytesParsed: 0 };
  }

  /**
   * Releases the native parser (it is not garbage-collected by itself), on the next turn of the
   * event loop, as node:http does (closeParserInstance): a consumed parser calls back from inside
   * its own native read, and deleting it there was a use-after-free (SIGSEGV, seen once in the
   * upgrade tests when a 101's read handed the socket to a tunnel).
   */
  close(): void {
    setImmediate(closeParser, this.#parser);
  }
}

function closeParser(parser: HTTPParser): void {
  parser.close();
}

function parseResult(result: number | Error): number | ParseError {
  if (typeof result === "number") return result;
  const error = result as Error & { code?: string; reason?: string; bytesParsed?: number };
  return { code: error.code ?? "HPE_UNKNOWN", reason: error.reason ?? error.message, bytesParsed: error.bytesParsed ?? 0 };
}

/** Whether `result` is a read that BODY.pause stopped (bytesParsed: the end of that head), not an error. */
export function isPaused(result: number | ParseError): result is ParseError {
  return typeof result !== "number" && result.code === PAUSED;
}

/** Whether `result` is a parse error rather than a byte count. */
export function isParseError(result: number | ParseError): result is ParseError {
  return typeof result !== "number";
}

/**
 * Starts or stops reads on a consumed socket's handle, as node:http's server does: the stream's
 * own pause() does not reach a handle whose reads go to the parser, nor does resume() restart
 * one the stream thinks is flowing. `reading` is kept in step because net.Socket reads it to
 * decide whether to start reads itself.
 */
export function setReading(socket: Socket, reading: boolean): void {
  const handle = (socket as unknown as { _handle?: { reading: boolean; readStart(): number; readStop(): number } | null })._handle;
  if (handle === undefined || handle === null || handle.reading === reading) return;
  handle.reading = reading;
  if (reading) handle.readStart();
  else handle.readStop();
}
