// The request parsers not in use: lent to a client connection while it has bytes to parse, given back while it waits, so an idle or queued connection holds none.
import { HttpParser, type ParserHandler } from "./llhttp-binding.js";

/**
 * Parsers kept for the next connection at most; one given back beyond that is closed. Each is
 * about 6 KB of native memory (glibc's heap: 5,000 idle connections with a parser each held
 * 31 MB more than without, bench section 6), which glibc keeps once freed, so a burst that had
 * one per connection left its peak behind. Kept: the parsers of as many connections as read at
 * the same moment, which is what a busy relay lends again and again.
 */
export const MAX_FREE_PARSERS = 64;

/**
 * Parsers lent past which a connection gives its parser back as soon as its answer is done and
 * nothing else was read (ClientConnection), not at the next quiet sweep: the parsers of as many
 * busy connections as a relay serves at once stay lent, a burst of idle ones does not. At 256,
 * 10,000 clients arriving in 64 MiB peaked 1.3-1.7 MiB higher than at 64 (glibc keeps the
 * holes the parsers freed among the sockets allocated meanwhile); past 64 a busy connection's
 * parser goes back between its requests and is lent again from the free list.
 */
export const LENT_BEFORE_PROMPT_GIVE_BACK = 64;

/** A free list like node:http's `parsers` FreeList, but lent by the read, not by the connection. */
export class ParserPool {
  readonly #free: HttpParser[] = [];
  readonly #maxFree: number;
  #lent = 0;

  constructor(maxFree = MAX_FREE_PARSERS) {
    this.#maxFree = maxFree;
  }

  /** Parsers lent and not given back: those of connections in the middle of a read or a message. */
  get lent(): number {
    return this.#lent;
  }

  /** Parsers kept for reuse. */
  get free(): number {
    return this.#free.length;
  }

  /** A parser at the start of a message, calling `handler`: a kept one reused, else a new one. */
  lend(handler: ParserHandler): HttpParser {
    this.#lent++;
    const parser = this.#free.pop();
    if (parser === undefined) return new HttpParser("request", handler);
    parser.reuse(handler);
    return parser;
  }

  /** A parser its connection is done with (no handle consumed by it, no read inside it): kept, or closed when enough are. */
  giveBack(parser: HttpParser): void {
    this.#lent--;
    if (this.#free.length < this.#maxFree) {
      parser.release();
      this.#free.push(parser);
    } else {
      parser.close();
    }
  }

  /** A parser that is not to be reused (a tunnel's, after a parse error): closed, and no longer counted as lent. */
  discard(parser: HttpParser): void {
    this.#lent--;
    parser.close();
  }
}
