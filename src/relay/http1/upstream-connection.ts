// One TCP connection to the app: writes what its current exchange sends, parses the answers with llhttp, reports to that exchange.
import { connect, type Socket } from "node:net";
import { faultAt } from "../fault-injection.js";
import { NO_READING } from "../../timers.js";
import { isNamed } from "../header-name.js";
import { HEAD_TIMEOUT_CODE, UpstreamFailure } from "../upstream-failure.js";
import { BODY, HttpParser, isParseError, setReading, type BodyDirective, type ParsedHead, type ParseError } from "./llhttp-binding.js";
import type { ReadEndWaiter } from "../app-side.js";

/** What an exchange is told by the connection it holds. */
export interface UpstreamOwner {
  onConnected(): void;
  /** Every head, 1xx included; the answer tells llhttp whether a body follows. */
  onResponseHead(head: ParsedHead): BodyDirective;
  onResponseBody(chunk: Buffer): void;
  /** The final response ended; `keepAlive`: the app allows another request on this connection. */
  onResponseEnd(keepAlive: boolean): void;
  /** A 101 was granted: the socket is the tunnel's now, with the bytes that came after the head. */
  onTunnel(socket: Socket, rest: Buffer): void;
  /** The connection failed (refused, reset, closed, unparseable) before the response ended. */
  onUpstreamFailure(failure: UpstreamFailure): void;
  /** The app's side accepts more request body. */
  onUpstreamDrain(): void;
  /** A defect of ours in one of this connection's callbacks (the connection is already destroyed). */
  onInternalFault(error: unknown): void;
}

/** Host and port, or a unix socket's path (`--upstream unix:`). */
export type UpstreamAddress = { readonly host: string; readonly port: number } | { readonly path: string };

/** A connection's life: the pool reuses it only while it is `idle`. */
export class UpstreamConnection {
  readonly socket: Socket;
  #parser: HttpParser;
  #owner: UpstreamOwner | undefined;
  #connected = false;
  #answered = false;
  #finalHead = false;
  #keepAlive = false;
  #upgrading = false;
  #tunneled = false;
  /** A message began while no exchange held the connection: the app sent what nobody asked for. */
  #unasked = false;
  /**
   * A final answer ended inside the read being parsed: the rest of that read is the app's too,
   * and must be looked at before anyone may send on the connection again (see whenSettled).
   */
  #settling = false;
  #onSettled: ((connection: UpstreamConnection) => void) | undefined;
  /** The exchange whose answer ended in this read: a fault before the read is done is still its. */
  #settlingOwner: UpstreamOwner | undefined;
  /** The parser reads the socket's handle itself (see HttpParser.consume), from the connect on. */
  #consumed = false;
  #failure: UpstreamFailure | undefined;
  /**
   * The response head deadline: one timer for the connection's life, re-armed per request with
   * refresh(), so a request costs no timer of its own; a firing while nothing is awaited is ignored.
   */
  #headTimer: NodeJS.Timeout | undefined;
  #awaitingHead = false;
  /** A client socket corked while this read is parsed (see corkClientUntilReadEnds). */
  #corkedClient: Socket | undefined;
  /** Who holds something back until this read has been parsed (see holdUntilReadEnds). */
  #readEndWaiter: ReadEndWaiter | undefined;
  /** Set by the pool: when this connection went idle (on the pool's clock, the daemon's timers); no reading while in use. */
  idleSince = NO_READING;
  /** What the app's last `Keep-Alive: timeout=N` allows us to keep it idle, in ms (Infinity: no hint). */
  #hintedIdleMs = Infinity;
  /** A defect of ours while no exchange held the connection (it is closed for it). */
  onFault: ((error: unknown) => void) | undefined;
  /** The app sent bytes nobody asked for (the connection is closed for it). */
  onUnasked: (() => void) | undefined;
  /** Called when the socket is gone, so the pool can forget it. */
  onGone: ((connection: UpstreamConnection) => void) | undefined;

  constructor(address: UpstreamAddress) {
    this.socket = "path" in address ? connect({ path: address.path }) : connect({ host: address.host, port: address.port, noDelay: true });
    this.#parser = new HttpParser("response", {
      onMessageBegin: () => {
        if (this.#owner === undefined) this.#unasked = true;
      },
      onHead: (head) => {
        this.#answered = true;
        this.#awaitingHead = false;
        if (head.statusCode >= 200 || head.statusCode === 101) {
          this.#finalHead = true;
          this.#keepAlive = head.keepAlive;
          if (head.keepAlive) this.#hintedIdleMs = hintedIdleMs(head.headers, this.#hintedIdleMs);
        }
        faultAt("upstream head");
        const directive = this.#owner?.onResponseHead(head) ?? BODY.parse;
        if (directive === BODY.upgrade) this.#upgrading = true;
        return directive;
      },
      onBody: (chunk) => {
        faultAt("upstream body");
        this.#owner?.onResponseBody(chunk);
      },
      onMessageComplete: () => {
        // A 1xx ended (the final answer follows), or a 101 became a tunnel (#onData hands it over).
        if (!this.#finalHead || this.#upgrading) return;
        const owner = this.#owner;
        this.#owner = undefined;
        this.#finalHead = false;
        this.#settling = true;
        this.#settlingOwner = owner;
        owner?.onResponseEnd(this.#keepAlive);
      },
      onFault: (error) => this.#fault(error),
    });
    // Each socket event is an entry from the event loop: a throw ends this connection's exchange only.
    this.socket.on("connect", () => this.#contained(this.#onConnect));
    // Reads come here only when the handle cannot be consumed; the listener keeps the stream flowing so its end is seen.
    this.socket.on("data", (data: Buffer) => this.#onData(data));
    this.socket.on("end", () => this.#contained(this.#onEnd));
    this.socket.on("error", (error: NodeJS.ErrnoException) => {
      this.#failure ??= new UpstreamFailure(error.code ?? "ECONNRESET", error.message);
    });
    this.socket.on("drain", () => this.#contained(this.#onDrain));
    this.socket.on("close", () => this.#contained(this.#onClose));
  }

  #onConnect(): void {
    this.#connected = true;
    // The connect's deadline is met; the head's starts when the request has been sent.
    this.#awaitingHead = false;
    this.#consumed = this.#parser.consume(this.socket, (result) => this.#afterRead(result, undefined));
    this.#owner?.onConnected();
  }

  #onDrain(): void {
    this.#owner?.onUpstreamDrain();
  }

  /** Runs an event handler inside this connection's fault boundary. */
  #contained(handler: (this: UpstreamConnection) => void): void {
    try {
      faultAt("upstream event");
      handler.call(this);
    } catch (error) {
      this.#fault(error);
    }
  }

  /**
   * The fault boundary: the connection is dropped and its exchange (if any) handles the defect
   * as its own; with none, the pool reports it. Nothing of this connection is used again.
   */
  #fault(error: unknown): void {
    const owner = this.#owner ?? this.#settlingOwner;
    this.#owner = undefined;
    this.#settlingOwner = undefined;
    this.#readEnded();
    this.#uncorkClient();
    this.socket.destroy();
    if (owner !== undefined) owner.onInternalFault(error);
    else this.onFault?.(error);
  }

  get connected(): boolean {
    return this.#connected;
  }

  /** No byte of an answer has come for the current exchange. */
  get unanswered(): boolean {
    return !this.#answered;
  }

  /**
   * Whether the read that ended the last answer is still being parsed; if so, `reusable` runs
   * once it has been, unless the rest of it was bytes nobody asked for (an unasked response, a
   * body after HEAD/204/304, a late 1xx): then the connection closes and they reach no one.
   * Handed on synchronously, the rest of the read became the next request's answer.
   */
  whenSettled(reusable: (connection: UpstreamConnection) => void): boolean {
    if (!this.#settling) return false;
    this.#onSettled = reusable;
    return true;
  }

  /** How long it may stay idle: our own limit, or less when the app said it closes sooner. */
  idleLimitMs(ownLimitMs: number): number {
    return Math.min(ownLimitMs, this.#hintedIdleMs);
  }

  /** Gives the connection to an exchange. */
  assign(owner: UpstreamOwner): void {
    this.#owner = owner;
    this.#answered = false;
    this.#awaitingHead = false;
    this.idleSince = NO_READING;
  }

  write(data: string | Buffer): boolean {
    return this.socket.write(data, "latin1");
  }

  /**
   * Holds `client`'s writes until this read of the app's answer has been parsed: the head, the
   * body bytes of the same read and, for a small answer, its end leave in one writev (a syscall
   * per response saved), and a stream's first event still leaves at once, with no timer or tick.
   */
  corkClientUntilReadEnds(client: Socket): void {
    if (this.#corkedClient === client) return;
    this.#uncorkClient();
    client.cork();
    this.#corkedClient = client;
  }

  /**
   * `waiter` is told once this read has been parsed: an answer's head held back for the body
   * bytes of the same read, so that head and body leave in one write with no cork (the
   * Writable's buffered entries and writev per response), and a head whose body is not in this
   * read still leaves at its end, with no timer or tick.
   */
  holdUntilReadEnds(waiter: ReadEndWaiter): void {
    if (this.#readEndWaiter !== waiter) this.#readEnded();
    this.#readEndWaiter = waiter;
  }

  #readEnded(): void {
    const waiter = this.#readEndWaiter;
    if (waiter === undefined) return;
    this.#readEndWaiter = undefined;
    waiter.readEnded();
  }

  #uncorkClient(): void {
    const client = this.#corkedClient;
    if (client === undefined) return;
    this.#corkedClient = undefined;
    client.uncork();
  }

  /** The request is all sent: its answer's head must come within `ms` (the same for every request), else the owner fails with HEAD_TIMEOUT_CODE. */
  awaitHead(ms: number): void {
    this.#awaitingHead = true;
    if (this.#headTimer === undefined) this.#headTimer = setTimeout(this.#onHeadTimer, ms).unref();
    else this.#headTimer.refresh();
  }

  readonly #onHeadTimer = (): void => {
    if (!this.#awaitingHead) return;
    this.#awaitingHead = false;
    try {
      faultAt("timer");
      this.#fail(new UpstreamFailure(HEAD_TIMEOUT_CODE, "upstream response head timed out"));
    } catch (error) {
      this.#fault(error);
    }
  };

  /** Backpressure from the client: stop reading the app's answer until it drains. */
  pauseReading(): void {
    if (this.#consumed) setReading(this.socket, false);
    else this.socket.pause();
  }

  resumeReading(): void {
    if (this.#consumed) setReading(this.socket, true);
    else this.socket.resume();
  }

  /** Drops the connection; its owner is not told (it asked, or there is none). */
  destroy(): void {
    this.#owner = undefined;
    this.socket.destroy();
  }

  #onData(data: Buffer): void {
    try {
      this.#afterRead(this.#parser.execute(data), data);
    } catch (error) {
      this.#fault(error);
    }
  }

  /** `read`: the read parsed, when it came as a `data` event; undefined when the parser read the handle itself (then it is asked for a copy, only after an upgrade: no closure per read). */
  #afterRead(result: number | ParseError, read: Buffer | undefined): void {
    this.#readEnded();
    this.#uncorkClient();
    if (isParseError(result)) {
      this.#fail(new UpstreamFailure(result.code, `upstream sent an unparseable answer: ${result.reason}`));
      return;
    }
    if (this.#upgrading) {
      this.#tunnel((read ?? this.#parser.currentRead()).subarray(result));
      return;
    }
    const onSettled = this.#onSettled;
    this.#settling = false;
    this.#onSettled = undefined;
    this.#settlingOwner = undefined;
    if (this.#unasked) {
      // Bytes after a complete answer, or on an idle connection, belong to no request: it
      // cannot be trusted again.
      this.onUnasked?.();
      this.socket.destroy();
      return;
    }
    if (onSettled !== undefined && !this.socket.destroyed) onSettled(this);
  }

  #onEnd(): void {
    // A body delimited by the close ends here; anything else cut short is a failure.
    const error = this.#parser.finish();
    if (error !== undefined) this.#fail(new UpstreamFailure("ECONNRESET", `upstream closed the connection mid-answer: ${error.reason}`));
    this.socket.destroy();
  }

  #onClose(): void {
    clearTimeout(this.#headTimer);
    if (!this.#tunneled) this.#parser.close();
    this.onGone?.(this);
    const owner = this.#owner;
    this.#owner = undefined;
    if (owner !== undefined) owner.onUpstreamFailure(this.#failure ?? new UpstreamFailure("ECONNRESET", "upstream closed the connection"));
  }

  #fail(failure: UpstreamFailure): void {
    const owner = this.#owner;
    this.#owner = undefined;
    this.socket.destroy();
    owner?.onUpstreamFailure(failure);
  }

  /** Hands the socket to the owner's tunnel after a granted 101, with the bytes that followed the head. */
  #tunnel(rest: Buffer): void {
    this.#tunneled = true;
    const owner = this.#owner;
    this.#owner = undefined;
    this.socket.removeAllListeners("data");
    this.socket.removeAllListeners("end");
    this.socket.removeAllListeners("drain");
    if (this.#consumed) {
      this.#parser.unconsume();
      setReading(this.socket, true);
    }
    this.#parser.close();
    owner?.onTunnel(this.socket, rest);
  }
}

/** `timeout=N` in a Keep-Alive value (RFC 2068 §19.7.1's form, as servers send it). */
const KEEP_ALIVE_TIMEOUT = /(?:^|[\s,;])timeout\s*=\s*(\d+)/i;

/**
 * The idle time an answer's `Keep-Alive: timeout=N` leaves us (`current` when it says none): a
 * second less than N, as undici keeps it, or half of N when that is less than a second, so we
 * close before the app does and never send on a connection it is closing.
 */
function hintedIdleMs(headers: readonly string[], current: number): number {
  for (let index = 0; index < headers.length; index += 2) {
    const name = headers[index]!;
    if (!isNamed(name, "keep-alive")) continue;
    const match = KEEP_ALIVE_TIMEOUT.exec(headers[index + 1]!);
    if (match === null) continue;
    const seconds = Number(match[1]);
    return Math.max(seconds * 1000 - 1000, seconds * 500);
  }
  return current;
}
