// The order of one HTTP/1.1 connection's requests (pipelining, RFC 9112 §9.3): the one being answered, those parsed behind it, and whether each one's request and answer have ended.
import type { Transaction } from "./transaction.js";

interface Waiting {
  readonly transaction: Transaction;
  readonly keepAlive: boolean;
  /** Its request has been read whole. */
  ended: boolean;
}

/**
 * State only, one per connection: the connection decides when to start, end or close, and this
 * keeps who is next. Answers go out in request order, so only one transaction is active; the
 * others wait parsed (the connection stops reading while any do, so they are at most one read's).
 */
export class RequestPipeline {
  #active: Transaction | undefined;
  #activeKeepAlive = true;
  #activeRequestEnded = false;
  #activeResponseEnded = false;
  /** The transaction whose request body is being parsed: the newest in line. */
  #parsing: Transaction | undefined;
  /**
   * The first in line behind the active one; those behind it (a pipelining client) in `#more`,
   * made only when a second one waits: an array per connection was 64 bytes of every idle one.
   * `#more` is empty whenever `#next` is undefined.
   */
  #next: Waiting | undefined;
  #more: Waiting[] | undefined;

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
    return this.#next === undefined ? 0 : 1 + (this.#more?.length ?? 0);
  }

  /** A head was parsed: its transaction joins the line, and its body is what is parsed from now. */
  parsed(transaction: Transaction, keepAlive: boolean): void {
    this.#parsing = transaction;
    const entry = { transaction, keepAlive, ended: false };
    if (this.#next === undefined) this.#next = entry;
    else (this.#more ??= []).push(entry);
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
    const waiting = this.#next?.transaction === transaction ? this.#next : this.#more?.find((entry) => entry.transaction === transaction);
    if (waiting) waiting.ended = true;
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
    if (this.#next?.transaction === transaction) {
      this.#next = this.#more?.shift();
      return true;
    }
    const at = this.#more?.findIndex((entry) => entry.transaction === transaction) ?? -1;
    if (at < 0) return false;
    this.#more?.splice(at, 1);
    return true;
  }

  /** Done with the active transaction: none is active until `next`. */
  finishActive(): void {
    this.#active = undefined;
  }

  /** The first in line becomes the active one; undefined when none waits. */
  next(): Transaction | undefined {
    const next = this.#next;
    if (next === undefined) return undefined;
    this.#next = this.#more?.shift();
    this.#active = next.transaction;
    this.#activeKeepAlive = next.keepAlive;
    this.#activeRequestEnded = next.ended;
    this.#activeResponseEnded = false;
    return next.transaction;
  }

  /** Empties the line for a close or a fault: the active transaction, and every other one it held. */
  takeAll(): { active: Transaction | undefined; others: Transaction[] } {
    const active = this.#active;
    const parsing = this.#parsing;
    this.#active = undefined;
    this.#parsing = undefined;
    const others = this.#next === undefined ? [] : [this.#next.transaction, ...(this.#more?.splice(0) ?? []).map((entry) => entry.transaction)];
    this.#next = undefined;
    if (parsing !== undefined && parsing !== active && !others.includes(parsing)) others.push(parsing);
    return { active, others };
  }
}
