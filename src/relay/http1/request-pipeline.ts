// The order of one HTTP/1.1 connection's requests (pipelining, RFC 9112 §9.3): the one being answered, those parsed behind it, and whether each one's request and answer have ended.
import type { Transaction } from "./transaction.js";

/**
 * Requests parsed ahead of their turn at most; the parser stops after the head that makes them
 * this many, and what follows it in the read is held as octets (RequestReader). Each waiting
 * request costs a transaction (~770 bytes of heap for a 27-octet GET): a 64 KiB read of them
 * was 1.8 MiB. nginx and HAProxy parse one request at a time out of their buffers; a few more
 * here let the line move on without a parse per answer.
 */
export const MAX_PARSED_AHEAD = 32;

interface Waiting {
  readonly transaction: Transaction;
  readonly keepAlive: boolean;
  /** Its request has been read whole. */
  ended: boolean;
}

/**
 * State only, one per connection: the connection decides when to start, end or close, and this
 * keeps who is next. Answers go out in request order, so only one transaction is active; the
 * others wait parsed (the connection stops reading while any do, and the parser after MAX_PARSED_AHEAD).
 * The first in line is kept in fields, the rest in a list made only when a second waits: a
 * request that is not pipelined costs no entry and no array.
 */
export class RequestPipeline {
  #active: Transaction | undefined;
  #activeKeepAlive = true;
  #activeRequestEnded = false;
  #activeResponseEnded = false;
  /** The transaction whose request body is being parsed: the newest in line. */
  #parsing: Transaction | undefined;
  /** The first waiting, when one does. */
  #first: Transaction | undefined;
  #firstKeepAlive = true;
  #firstEnded = false;
  /** Those behind the first. */
  #behind: Waiting[] | undefined;

  /** The transaction being answered. */
  get active(): Transaction | undefined {
    return this.#active;
  }

  /** The active request allows another on this connection (its own Connection header and version). */
  get activeKeepAlive(): boolean {
    return this.#activeKeepAlive;
  }

  /** The active transaction's answer has ended (its request body may not have). */
  get activeAnswered(): boolean {
    return this.#activeResponseEnded;
  }

  /** No transaction is active, or the active one's request and answer have both ended. */
  get activeFinished(): boolean {
    return this.#active === undefined || (this.#activeRequestEnded && this.#activeResponseEnded);
  }

  /** The transaction whose request body is being parsed. */
  get parsing(): Transaction | undefined {
    return this.#parsing;
  }

  /** How many wait parsed behind the active one. */
  get waiting(): number {
    return this.#first === undefined ? 0 : 1 + (this.#behind?.length ?? 0);
  }

  /** As many wait as may be parsed ahead (MAX_PARSED_AHEAD). */
  get full(): boolean {
    return this.waiting >= MAX_PARSED_AHEAD;
  }

  /** The only one waiting is the one whose request is being parsed. */
  get onlyParsingWaits(): boolean {
    return this.#first !== undefined && this.#first === this.#parsing && (this.#behind === undefined || this.#behind.length === 0);
  }

  /** A head was parsed: its transaction joins the line, and its body is what is parsed from now. */
  parsed(transaction: Transaction, keepAlive: boolean): void {
    this.#parsing = transaction;
    if (this.#first === undefined) {
      this.#first = transaction;
      this.#firstKeepAlive = keepAlive;
      this.#firstEnded = false;
    } else (this.#behind ??= []).push({ transaction, keepAlive, ended: false });
  }

  /** The transaction whose body was being parsed, no longer so (its request ended, or a parse error cut it). */
  takeParsing(): Transaction | undefined {
    const transaction = this.#parsing;
    this.#parsing = undefined;
    return transaction;
  }

  /** Its request was read whole. True when it is the active one: the connection may move on. */
  requestEnded(transaction: Transaction): boolean {
    if (transaction === this.#active) {
      this.#activeRequestEnded = true;
      return true;
    }
    if (transaction === this.#first) this.#firstEnded = true;
    else {
      const waiting = this.#behind?.find((entry) => entry.transaction === transaction);
      if (waiting) waiting.ended = true;
    }
    return false;
  }

  /** Its answer ended. True when it is the active one (an answer of one that left the line changes nothing). */
  responseEnded(transaction: Transaction): boolean {
    if (transaction !== this.#active) return false;
    this.#activeResponseEnded = true;
    return true;
  }

  /** Leaves the line if it waits there (a request a parse error cut before its turn); true if it did. */
  drop(transaction: Transaction): boolean {
    if (transaction === this.#first) {
      this.#shiftFirst();
      return true;
    }
    const at = this.#behind?.findIndex((entry) => entry.transaction === transaction) ?? -1;
    if (at < 0) return false;
    this.#behind!.splice(at, 1);
    return true;
  }

  /** Done with the active transaction: none is active until `next`. */
  finishActive(): void {
    this.#active = undefined;
  }

  /** The first in line becomes the active one; undefined when none waits. */
  next(): Transaction | undefined {
    const next = this.#first;
    if (next === undefined) return undefined;
    this.#active = next;
    this.#activeKeepAlive = this.#firstKeepAlive;
    this.#activeRequestEnded = this.#firstEnded;
    this.#activeResponseEnded = false;
    this.#shiftFirst();
    return next;
  }

  /** The one behind the first moves up (or none waits). */
  #shiftFirst(): void {
    const behind = this.#behind?.shift();
    this.#first = behind?.transaction;
    this.#firstKeepAlive = behind?.keepAlive ?? true;
    this.#firstEnded = behind?.ended ?? false;
  }

  /** Empties the line for a close or a fault: the active transaction, and every other one it held. */
  takeAll(): { active: Transaction | undefined; others: Transaction[] } {
    const active = this.#active;
    const parsing = this.#parsing;
    this.#active = undefined;
    this.#parsing = undefined;
    const others = this.#first === undefined ? [] : [this.#first, ...(this.#behind ?? []).map((entry) => entry.transaction)];
    this.#first = undefined;
    this.#behind = undefined;
    if (parsing !== undefined && parsing !== active && !others.includes(parsing)) others.push(parsing);
    return { active, others };
  }
}
