// Pure parser for /proc/net/unix: bytes in, the paths of listening stream sockets (`@name` for abstract ones), or why the table is unreadable, out.
import { COLON, HEX_VALUE, NEWLINE, SPACE, hexAt, isBlankOrEnd, skipBlanks } from "./table-bytes.js";

/** Outcome of parsing the unix socket table. */
export type UnixTableParse =
  | {
      readonly readable: true;
      /** Paths as the table shows them: what the app passed to bind(), `@` first for an abstract name. */
      readonly listeningPaths: ReadonlySet<string>;
    }
  | { readonly readable: false; readonly reason: string };

/** `__SO_ACCEPTCON`: the socket called listen(). */
const ACCEPTING = 0x00010000;
const SOCK_STREAM = 0x0001;
/** `SS_UNCONNECTED`, what a listening socket's state is. */
const UNCONNECTED = 0x01;
/** Longer than any row the kernel prints (a path is at most 108 bytes). */
const MAX_LINE_BYTES = 4096;

/**
 * Incremental parser for `/proc/net/unix` (`unix_seq_show`: `%pK: %08X %08X %08X %04X %02X %5lu`,
 * then ` <path>` when the socket is bound). Feed it bytes in any chunking with {@link push},
 * then call {@link finish}. Never throws on input. Rows come in hash order, so the whole table
 * is read. Given the paths a check asks about, only a listening row at one of them makes a
 * string: a server of 10,000 listening unix sockets costs the main thread no string per row.
 */
export class UnixTableParser {
  /** The paths that matter, as bytes; undefined: every listening path is recorded (tests, fixtures). */
  readonly #wanted: readonly Buffer[] | undefined;
  #sawHeader = false;
  #failure: string | undefined;
  #row = 0;
  readonly #listening = new Set<string>();
  readonly #carry = Buffer.allocUnsafe(MAX_LINE_BYTES);
  #carryLength = 0;

  constructor(wantedPaths?: readonly string[]) {
    this.#wanted = wantedPaths?.map((path) => Buffer.from(path, "utf8"));
  }

  /** Feeds the next bytes; returns false once the table is unreadable (more bytes change nothing). */
  push(chunk: Buffer): boolean {
    if (this.#failure !== undefined) return false;
    let start = 0;
    if (this.#carryLength > 0) {
      const newline = chunk.indexOf(NEWLINE);
      const lineEnd = newline < 0 ? chunk.length : newline;
      if (!this.#appendToCarry(chunk, 0, lineEnd) || newline < 0) return this.#failure === undefined;
      this.#line(this.#carry, 0, this.#carryLength);
      this.#carryLength = 0;
      start = newline + 1;
    }
    while (start < chunk.length && this.#failure === undefined) {
      const newline = chunk.indexOf(NEWLINE, start);
      if (newline < 0) {
        this.#appendToCarry(chunk, start, chunk.length);
        break;
      }
      this.#line(chunk, start, newline);
      start = newline + 1;
    }
    return this.#failure === undefined;
  }

  finish(): UnixTableParse {
    if (this.#failure === undefined && this.#carryLength > 0) {
      this.#line(this.#carry, 0, this.#carryLength);
      this.#carryLength = 0;
    }
    if (this.#failure === undefined && !this.#sawHeader) this.#failure = "empty table";
    if (this.#failure !== undefined) return { readable: false, reason: this.#failure };
    return { readable: true, listeningPaths: this.#listening };
  }

  #appendToCarry(chunk: Buffer, start: number, end: number): boolean {
    if (this.#carryLength + (end - start) > MAX_LINE_BYTES) {
      this.#failLongLine();
      return false;
    }
    this.#carryLength += chunk.copy(this.#carry, this.#carryLength, start, end);
    return true;
  }

  #failLongLine(): void {
    this.#failure = this.#sawHeader
      ? `row ${this.#row + 1} is not in the kernel's format: longer than ${MAX_LINE_BYTES} bytes`
      : "header is not the kernel's: longer than a socket table header";
  }

  #line(bytes: Buffer, start: number, end: number): void {
    if (end - start > MAX_LINE_BYTES) {
      this.#failLongLine();
      return;
    }
    if (!this.#sawHeader) {
      const header = bytes.toString("latin1", start, end);
      const tokens = header.trim().split(/[ \t]+/);
      const names = ["Num", "RefCount", "Protocol", "Flags", "Type", "St", "Inode", "Path"];
      if (names.every((name, index) => tokens[index] === name)) this.#sawHeader = true;
      else this.#failure = `header is not the kernel's: ${JSON.stringify(header.slice(0, 80))}`;
      return;
    }
    if (skipBlanks(bytes, start, end) === end) return;
    this.#row++;
    const pathAt = listeningPathAt(bytes, start, end);
    if (pathAt === MALFORMED) this.#failure = `row ${this.#row} is not in the kernel's format`;
    else if (pathAt >= 0 && this.#isWanted(bytes, pathAt, end)) this.#listening.add(bytes.toString("utf8", pathAt, end));
  }

  #isWanted(bytes: Buffer, start: number, end: number): boolean {
    if (this.#wanted === undefined) return true;
    return this.#wanted.some((path) => path.length === end - start && path.compare(bytes, start, end) === 0);
  }
}

const NOT_LISTENING = -1;
const MALFORMED = -2;

/** Where a listening stream socket's path starts in the row, NOT_LISTENING (unbound too), or MALFORMED. */
function listeningPathAt(bytes: Buffer, start: number, end: number): number {
  let index = skipBlanks(bytes, start, end);
  // Num: the kernel address (hex, zeros when hidden), then a colon.
  const numAt = index;
  while (index < end && HEX_VALUE[bytes[index]!]! >= 0) index++;
  if (index === numAt || bytes[index] !== COLON) return MALFORMED;
  index++;
  // RefCount, Protocol, Flags (8 hex digits each), Type (4), St (2).
  const values: number[] = [];
  for (const digits of [8, 8, 8, 4, 2]) {
    const fieldAt = skipBlanks(bytes, index, end);
    if (fieldAt === index || fieldAt + digits > end || !isBlankOrEnd(bytes, fieldAt + digits, end)) return MALFORMED;
    const value = hexAt(bytes, fieldAt, digits);
    if (value < 0) return MALFORMED;
    values.push(value);
    index = fieldAt + digits;
  }
  // Inode: decimal, right-aligned in five columns.
  const inodeAt = skipBlanks(bytes, index, end);
  if (inodeAt === index) return MALFORMED;
  index = inodeAt;
  while (index < end && bytes[index]! >= 0x30 && bytes[index]! <= 0x39) index++;
  if (index === inodeAt) return MALFORMED;
  let pathAt = -1;
  if (index < end) {
    // One space, then the path to the end of the row (it may hold spaces).
    if (bytes[index] !== SPACE || index + 1 === end) return MALFORMED;
    pathAt = index + 1;
  }
  const [, , flags, type, state] = values as [number, number, number, number, number];
  const listening = flags === ACCEPTING && type === SOCK_STREAM && state === UNCONNECTED;
  return listening && pathAt >= 0 ? pathAt : NOT_LISTENING;
}




/** Parses a whole table held in memory (tests, fixtures). */
export function parseUnixTable(bytes: Buffer): UnixTableParse {
  const parser = new UnixTableParser();
  parser.push(bytes);
  return parser.finish();
}
