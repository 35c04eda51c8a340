// An HTTP/1.1 head's octets built in one pass: each piece copied unit by unit into one scratch buffer, then the whole copied out once at its exact size (no string per piece, none for the head, none flattened when written).

/** A head past this grows the scratch (a request head is at most 16 KiB of the client's, plus what we add). */
const INITIAL_BYTES = 32 * 1024;

/**
 * One writer for every head, used synchronously from `begin` to `finish` (nothing it is handed
 * calls back into it). Strings are written as latin1, one byte per UTF-16 unit, as the socket's
 * latin1 write of the string head did: llhttp's and the h2 codec's strings are latin1 already.
 * Copying in a loop is faster than a native write per piece (Buffer#write is a call into C++
 * each): bench/README.md, issue 53's section.
 */
class HeadOctets {
  /** Empty until the first head: nothing is allocated at load (the bundle may be a startup snapshot). */
  #scratch = Buffer.alloc(0);
  #at = 0;

  begin(): void {
    this.#at = 0;
  }

  /** A request head to the app starts here: its request line, the same whichever protocol the client spoke. */
  beginRequest(method: string, target: string): void {
    this.#at = 0;
    this.put(method);
    this.put(" ");
    this.put(target);
    this.put(" HTTP/1.1\r\n");
  }

  put(text: string): void {
    const length = text.length;
    let at = this.#at;
    if (at + length > this.#scratch.length) this.#grow(at + length);
    const scratch = this.#scratch;
    for (let index = 0; index < length; index++) scratch[at++] = text.charCodeAt(index);
    this.#at = at;
  }

  /** A status code's three digits (any other number as its decimal text). */
  putStatus(status: number): void {
    if (status < 100 || status > 999 || (status | 0) !== status) return this.put(String(status));
    if (this.#at + 3 > this.#scratch.length) this.#grow(this.#at + 3);
    const scratch = this.#scratch;
    scratch[this.#at++] = 0x30 + Math.floor(status / 100);
    scratch[this.#at++] = 0x30 + (Math.floor(status / 10) % 10);
    scratch[this.#at++] = 0x30 + (status % 10);
  }

  /**
   * The head, in a buffer of its own exact size: a slice of Node's shared pool below 4 KiB. A
   * client that does not read can hold one until the kernel takes it, with its own send buffer
   * already full (far more than the pool's 8 KiB): memory still follows that client's octets.
   */
  finish(): Buffer {
    const head = Buffer.allocUnsafe(this.#at);
    this.#scratch.copy(head, 0, 0, this.#at);
    return head;
  }

  #grow(needed: number): void {
    const larger = Buffer.allocUnsafeSlow(Math.max(needed, this.#scratch.length * 2, INITIAL_BYTES));
    this.#scratch.copy(larger, 0, 0, this.#at);
    this.#scratch = larger;
  }
}

/** The one writer (the relay runs on one thread, and a head is built in one synchronous pass). */
export const headOctets = new HeadOctets();
