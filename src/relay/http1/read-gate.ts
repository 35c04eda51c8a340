// Whether an HTTP/1.1 client connection reads: paused for as many reasons as hold at once, reading again only once every one has cleared.
import type { Socket } from "node:net";
import { setReading } from "./llhttp-binding.js";

/** A request body waits for the app (queued, connecting, or its socket full). */
export const PAUSED_FOR_BODY = 1;
/** Requests wait parsed behind the one being answered. */
export const PAUSED_FOR_PIPELINE = 2;
/** What follows an upgrade head belongs to the tunnel, if one opens. */
export const PAUSED_FOR_UPGRADE = 4;
/** Nothing after a parse error or a fault is read for the parser. */
export const PAUSED_FOR_ERROR = 8;
/** Answers wait for the client to read what was written: reading stops with them. */
export const PAUSED_FOR_CLIENT = 16;
/** The unparsed rest of a read is held (the parser stopped after a head): it is parsed before the socket is read again. */
export const PAUSED_FOR_REMAINDER = 32;

/** Who holds a remainder: told when it alone keeps reading paused, so the remainder is parsed in the read's place. */
export interface RemainderHolder {
  remainderDue(): void;
}

/** One per connection; reasons are bits, so a resume for one reason never undoes another's pause. */
export class ReadGate {
  readonly #socket: Socket;
  readonly #holder: RemainderHolder;
  /** The parser reads the socket's handle itself (HttpParser.consume): the handle is paused, not the stream. */
  #onHandle: boolean;
  #reasons = 0;

  constructor(socket: Socket, onHandle: boolean, holder: RemainderHolder) {
    this.#socket = socket;
    this.#holder = holder;
    this.#onHandle = onHandle;
  }

  /** Only a held remainder keeps reading paused: it may be parsed now. */
  get onlyRemainder(): boolean {
    return this.#reasons === PAUSED_FOR_REMAINDER;
  }

  has(reason: number): boolean {
    return (this.#reasons & reason) !== 0;
  }

  /** No reason holds reading: the only time the parser may take the handle or give it back (see useHandle). */
  get open(): boolean {
    return this.#reasons === 0;
  }

  /**
   * The parser took the handle (true) or gave it back to the stream (false). Only while open:
   * a pause made on one and lifted on the other would leave reads stopped for good.
   */
  useHandle(onHandle: boolean): void {
    if (this.#reasons !== 0) throw new Error("ReadGate.useHandle() while reading is paused");
    this.#onHandle = onHandle;
  }

  pause(reason: number): void {
    if (this.#reasons === 0) {
      if (this.#onHandle) setReading(this.#socket, false);
      else this.#socket.pause();
    }
    this.#reasons |= reason;
  }

  resume(reasons: number): void {
    if (this.#reasons === 0) return;
    this.#reasons &= ~reasons;
    if (this.#reasons !== 0) {
      if (this.#reasons === PAUSED_FOR_REMAINDER) this.#holder.remainderDue();
      return;
    }
    if (this.#socket.destroyed) return;
    if (this.#onHandle) setReading(this.#socket, true);
    else this.#socket.resume();
  }

  /**
   * Every reason dropped and reading restarted, on the stream from now on: the parser has let go
   * of the handle (a tunnel, or input read and dropped). The handle is restarted directly, as the
   * stream still counts as flowing and its resume() would not.
   */
  openForStream(): void {
    this.#reasons = 0;
    if (this.#onHandle) setReading(this.#socket, true);
    else this.#socket.resume();
    this.#onHandle = false;
  }
}
