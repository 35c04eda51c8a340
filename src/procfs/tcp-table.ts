// Pure parser for /proc/net/tcp and /proc/net/tcp6: bytes in, LISTEN ports and their addresses (or why the table is unreadable) out, stopping where the LISTEN rows end.
import { formatKernelAddress } from "./kernel-address.js";
import { COLON, HEX_VALUE, NEWLINE, hexAt, isBlankOrEnd, skipBlanks } from "./table-bytes.js";

/** Outcome of parsing one socket table. */
export type TableParse =
  | {
      readonly readable: true;
      readonly listeningPorts: ReadonlySet<number>;
      /** Per LISTEN port, the local addresses it listens on (`127.0.0.1`, `0.0.0.0`, `::`, `::ffff:127.0.0.1`), in table order. */
      readonly listenAddresses: ReadonlyMap<number, readonly string[]>;
    }
  | { readonly readable: false; readonly reason: string };

/** Kernel socket state TCP_LISTEN, printed as `0A` in the `st` column. */
const TCP_LISTEN = 0x0a;
/**
 * TCP_SYN_RECV, `03`: kernels before 4.4 printed each listener's open requests (its SYN queue)
 * right under it, inside the listening section (`listening_get_next`, TCP_SEQ_STATE_OPENREQ),
 * so such a row does not end that section. Later kernels print them among the established rows.
 */
const TCP_SYN_RECV = 0x03;
/** Longer than any row or header the kernel prints (tcp rows are 149 bytes, tcp6 under 200). */
const MAX_LINE_BYTES = 4096;

// What parseRow found; ports are 0..65535, so the other outcomes are negative.
const NOT_LISTENING = -1;
const BLANK = -2;
const MALFORMED = -3;
const OPEN_REQUEST = -4;

/**
 * Incremental parser for one socket table. Feed it the file's bytes in any chunking with
 * {@link push}, then call {@link finish}. It never throws on input and creates no string or
 * object per row: rows are found with the native newline search, and of each row only the
 * bytes that decide something are read (the separators and digits of the first four
 * columns). A row that straddles two chunks is copied into a small carry buffer and parsed
 * from there.
 *
 * The kernel prints a table's listening hash before its established one (`tcp_seq_next`), so
 * every LISTEN row comes before the first row that is neither LISTEN nor an open request
 * under a listener (see TCP_SYN_RECV). That row, checked like any other, ends the parse: the
 * rest decides nothing, and {@link push} says so, so the reader stops asking the kernel to
 * print it. A scan then costs what the listeners cost, however many connections there are.
 */
export class TcpTableParser {
  /** `listen` for TCP (LISTEN rows, the listening section only); `every` for UDP, whose every row is a bound socket, in no order. */
  readonly #rowsThatCount: "listen" | "every";
  #sawHeader = false;
  #failure: string | undefined;
  #row = 0;
  /** The first row past the listening section was seen: nothing after it is read. */
  #pastListeners = false;
  readonly #listening = new Set<number>();
  readonly #addresses = new Map<number, string[]>();
  readonly #carry = Buffer.allocUnsafe(MAX_LINE_BYTES);
  #carryLength = 0;

  constructor(rowsThatCount: "listen" | "every" = "listen") {
    this.#rowsThatCount = rowsThatCount;
  }

  /**
   * Feeds the next bytes of the table. The parser keeps no reference to `chunk`. Returns
   * whether more bytes can change the verdict: false once the table is unreadable or the
   * listening section has ended, and the caller should stop reading.
   */
  push(chunk: Buffer): boolean {
    if (!this.#wantsMore()) return false;
    let start = 0;
    if (this.#carryLength > 0) {
      const newline = chunk.indexOf(NEWLINE);
      const lineEnd = newline < 0 ? chunk.length : newline;
      if (!this.#appendToCarry(chunk, 0, lineEnd) || newline < 0) return this.#wantsMore();
      this.#line(this.#carry, 0, this.#carryLength);
      this.#carryLength = 0;
      start = newline + 1;
    }
    const end = chunk.length;
    while (start < end && this.#wantsMore()) {
      const newline = chunk.indexOf(NEWLINE, start);
      if (newline < 0) {
        this.#appendToCarry(chunk, start, end);
        break;
      }
      this.#line(chunk, start, newline);
      start = newline + 1;
    }
    return this.#wantsMore();
  }

  #wantsMore(): boolean {
    return this.#failure === undefined && !this.#pastListeners;
  }

  /** Ends the input and returns the verdict on the table. */
  finish(): TableParse {
    if (this.#wantsMore() && this.#carryLength > 0) {
      // The last line had no newline after it.
      this.#line(this.#carry, 0, this.#carryLength);
      this.#carryLength = 0;
    }
    if (this.#failure === undefined && !this.#sawHeader) this.#failure = "empty table";
    if (this.#failure !== undefined) return { readable: false, reason: this.#failure };
    return { readable: true, listeningPorts: this.#listening, listenAddresses: this.#addresses };
  }

  #appendToCarry(chunk: Buffer, start: number, end: number): boolean {
    if (this.#carryLength + (end - start) > MAX_LINE_BYTES) {
      this.#failLongLine();
      return false;
    }
    this.#carryLength += chunk.copy(this.#carry, this.#carryLength, start, end);
    return true;
  }

  /** One line without its newline: the header first, then rows. */
  #line(bytes: Buffer, start: number, end: number): void {
    if (end - start > MAX_LINE_BYTES) {
      // Refused whether or not it straddled two chunks, so the chunking never changes the answer.
      this.#failLongLine();
      return;
    }
    if (!this.#sawHeader) {
      this.#checkHeader(bytes.toString("latin1", start, end));
      return;
    }
    const found = parseRow(bytes, start, end, this.#rowsThatCount === "every");
    if (found === BLANK) return;
    this.#row++;
    if (found >= 0) {
      this.#listening.add(found);
      // Only LISTEN rows make a string: a pod has a handful, against thousands of connections.
      // A UDP table's every row counts, and no UDP check reads an address: none is made.
      if (this.#rowsThatCount === "every") return;
      const address = localAddressOf(bytes, start, end);
      const addresses = this.#addresses.get(found);
      if (addresses) addresses.push(address);
      else this.#addresses.set(found, [address]);
    } else if (found === NOT_LISTENING) this.#pastListeners = true;
    else if (found === MALFORMED) this.#failure = `row ${this.#row} is not in the kernel's format`;
  }

  #failLongLine(): void {
    this.#failure = this.#sawHeader
      ? `row ${this.#row + 1} is not in the kernel's format: longer than ${MAX_LINE_BYTES} bytes`
      : "header is not the kernel's: longer than a socket table header";
  }

  #checkHeader(header: string): void {
    const tokens = header.trim().split(/[ \t]+/);
    const isKernelHeader =
      tokens[0] === "sl" &&
      tokens[1] === "local_address" &&
      (tokens[2] === "rem_address" || tokens[2] === "remote_address") &&
      tokens[3] === "st";
    if (isKernelHeader) this.#sawHeader = true;
    else this.#failure = `header is not the kernel's: ${JSON.stringify(header.slice(0, 80))}`;
  }
}

/**
 * Reads one row (`bytes[start..end)`, no newline) in the kernel's form:
 * `  N: ADDR:PORT ADDR:PORT ST ...` with ADDR 8 (tcp) or 32 (tcp6) characters and PORT, ST hex.
 * Returns the local port if `st` is `0A`, OPEN_REQUEST for `03`, or NOT_LISTENING, BLANK or MALFORMED. Columns after
 * `st` decide nothing and are not read.
 */
function parseRow(bytes: Buffer, start: number, end: number, anyState: boolean): number {
  let index = skipBlanks(bytes, start, end);
  if (index === end) return BLANK;
  // Field 0, `sl`: decimal digits and a colon.
  const slStart = index;
  while (index < end && bytes[index]! >= 0x30 && bytes[index]! <= 0x39) index++;
  if (index === slStart || index === end || bytes[index] !== COLON) return MALFORMED;
  index++;
  // Fields 1 and 2: ADDR:PORT.
  const localPortAt = addressPortAt(bytes, index, end);
  if (localPortAt < 0) return MALFORMED;
  const remotePortAt = addressPortAt(bytes, localPortAt + 4, end);
  if (remotePortAt < 0) return MALFORMED;
  // Field 3, `st`: two hex digits, then a blank or the end of the row.
  const stateAt = skipBlanks(bytes, remotePortAt + 4, end);
  if (stateAt === remotePortAt + 4 || stateAt + 2 > end || !isBlankOrEnd(bytes, stateAt + 2, end)) return MALFORMED;
  const state = hexAt(bytes, stateAt, 2);
  const localPort = hexAt(bytes, localPortAt, 4);
  if (state < 0 || localPort < 0 || hexAt(bytes, remotePortAt, 4) < 0) return MALFORMED;
  if (state === TCP_LISTEN || anyState) return localPort;
  return state === TCP_SYN_RECV ? OPEN_REQUEST : NOT_LISTENING;
}

/** The local address of a row {@link parseRow} accepted, as text: after the `sl` colon and blanks, up to the port's colon. */
function localAddressOf(bytes: Buffer, start: number, end: number): string {
  const addressAt = skipBlanks(bytes, bytes.indexOf(COLON, start) + 1, end);
  const length = bytes[addressAt + 8] === COLON ? 8 : 32;
  return formatKernelAddress(bytes.toString("latin1", addressAt, addressAt + length));
}

/** After at least one blank at `index`: where the 4 port digits of an ADDR:PORT column start, or -1. */
function addressPortAt(bytes: Buffer, index: number, end: number): number {
  const addressAt = skipBlanks(bytes, index, end);
  if (addressAt === index) return -1;
  const colonAt = bytes[addressAt + 8] === COLON ? addressAt + 8 : bytes[addressAt + 32] === COLON ? addressAt + 32 : -1;
  if (colonAt < 0 || colonAt + 5 > end || !isBlankOrEnd(bytes, colonAt + 5, end)) return -1;
  for (let digitAt = addressAt; digitAt < colonAt; digitAt++) {
    if (HEX_VALUE[bytes[digitAt]!]! < 0) return -1;
  }
  return colonAt + 1;
}




/** Parses a whole table held in memory (tests, fixtures); the daemon streams with {@link TcpTableParser}. */
export function parseTcpTable(bytes: Buffer): TableParse {
  const parser = new TcpTableParser();
  parser.push(bytes);
  return parser.finish();
}
