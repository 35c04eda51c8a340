// HTTP/2 written and read at the byte level for tests: frames (RFC 9113 §4, §6), HPACK header blocks without Huffman or a dynamic table (RFC 7541), and a frame reader.

/** The client connection preface (RFC 9113 §3.4). */
export const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

export const FRAME = { DATA: 0, HEADERS: 1, PRIORITY: 2, RST_STREAM: 3, SETTINGS: 4, PING: 6, GOAWAY: 7, WINDOW_UPDATE: 8, CONTINUATION: 9 } as const;
export const FLAG = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4, PADDED: 0x8, PRIORITY: 0x20 } as const;
/** SETTINGS_MAX_FRAME_SIZE's initial value: the largest payload a peer must accept. */
export const MAX_FRAME_PAYLOAD = 16_384;

/** One frame: the 9-byte header (24-bit length, type, flags, 31-bit stream id), then the payload. */
export function frame(type: number, flags: number, streamId: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId >>> 0, 5);
  return Buffer.concat([header, payload]);
}

/** A SETTINGS frame of (identifier, value) pairs. */
export function settingsFrame(entries: ReadonlyArray<readonly [number, number]>): Buffer {
  const payload = Buffer.alloc(entries.length * 6);
  entries.forEach(([id, value], index) => {
    payload.writeUInt16BE(id, index * 6);
    payload.writeUInt32BE(value, index * 6 + 2);
  });
  return frame(FRAME.SETTINGS, 0, 0, payload);
}

/** RFC 7541 Appendix A: the static table, index 1 first. */
const STATIC_TABLE: ReadonlyArray<readonly [string, string]> = (
  ":authority|;:method|GET;:method|POST;:path|/;:path|/index.html;:scheme|http;:scheme|https;:status|200;:status|204;:status|206;" +
  ":status|304;:status|400;:status|404;:status|500;accept-charset|;accept-encoding|gzip, deflate;accept-language|;accept-ranges|;" +
  "accept|;access-control-allow-origin|;age|;allow|;authorization|;cache-control|;content-disposition|;content-encoding|;" +
  "content-language|;content-length|;content-location|;content-range|;content-type|;cookie|;date|;etag|;expect|;expires|;from|;" +
  "host|;if-match|;if-modified-since|;if-none-match|;if-range|;if-unmodified-since|;last-modified|;link|;location|;max-forwards|;" +
  "proxy-authenticate|;proxy-authorization|;range|;referer|;refresh|;retry-after|;server|;set-cookie|;strict-transport-security|;" +
  "transfer-encoding|;user-agent|;vary|;via|;www-authenticate|"
)
  .split(";")
  .map((entry) => entry.split("|") as [string, string]);

/**
 * How a field goes into the block. `indexed`: a static table entry, name and value (§6.1), when
 * there is one, else as `literal`. `literal`: without indexing, the name as a literal (§6.2.2).
 * `indexed-name`: without indexing, the name as a static index when there is one. `never`: the
 * never-indexed form (§6.2.3). None touches the dynamic table, so blocks are independent.
 */
export type FieldForm = "indexed" | "literal" | "indexed-name" | "never";

export interface HeaderField {
  readonly name: string;
  readonly value: string;
  readonly form?: FieldForm;
}

/** An integer with an N-bit prefix (§5.1); `high` holds the first byte's bits above the prefix. */
export function hpackInteger(value: number, prefixBits: number, high = 0): Buffer {
  const limit = (1 << prefixBits) - 1;
  if (value < limit) return Buffer.from([high | value]);
  const bytes = [high | limit];
  let rest = value - limit;
  while (rest >= 128) {
    bytes.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}

/** A string literal without Huffman (§5.2): the bytes exactly as given (latin1). */
function hpackString(text: string): Buffer {
  const bytes = Buffer.from(text, "latin1");
  return Buffer.concat([hpackInteger(bytes.length, 7), bytes]);
}

function staticIndex(name: string, value?: string): number {
  const index = STATIC_TABLE.findIndex(([entryName, entryValue]) => entryName === name && (value === undefined || entryValue === value));
  return index + 1;
}

/** One field representation. */
export function encodeField({ name, value, form = "literal" }: HeaderField): Buffer {
  if (form === "indexed") {
    const index = staticIndex(name, value);
    if (index > 0) return hpackInteger(index, 7, 0x80);
  }
  const nameIndex = form === "indexed-name" ? staticIndex(name) : 0;
  const high = form === "never" ? 0x10 : 0x00;
  if (nameIndex > 0) return Buffer.concat([hpackInteger(nameIndex, 4, high), hpackString(value)]);
  return Buffer.concat([Buffer.from([high]), hpackString(name), hpackString(value)]);
}

/** A whole header block. */
export function headerBlock(fields: readonly HeaderField[]): Buffer {
  return Buffer.concat(fields.map(encodeField));
}

export interface Frame {
  readonly type: number;
  readonly flags: number;
  readonly streamId: number;
  readonly payload: Buffer;
}

/** Splits a byte stream into frames as they complete; `onFrame` gets each. */
export class FrameReader {
  #buffer: Buffer = Buffer.alloc(0);
  readonly #onFrame: (frame: Frame) => void;

  constructor(onFrame: (frame: Frame) => void) {
    this.#onFrame = onFrame;
  }

  push(chunk: Buffer): void {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    while (this.#buffer.length >= 9) {
      const length = this.#buffer.readUIntBE(0, 3);
      if (this.#buffer.length < 9 + length) return;
      const header = this.#buffer;
      this.#buffer = this.#buffer.subarray(9 + length);
      this.#onFrame({ type: header[3]!, flags: header[4]!, streamId: header.readUInt32BE(5) & 0x7fffffff, payload: header.subarray(9, 9 + length) });
    }
  }
}

/**
 * The `:status` a response block starts with, when it is one of the static table's (200, 204,
 * 206, 304, 400, 404, 500): nghttp2 puts `:status` first and sends those as one indexed byte.
 * Dynamic table size updates before it are skipped. Undefined for any other status.
 */
export function staticStatusOf(block: Buffer): number | undefined {
  let at = 0;
  // A size update is 001xxxxx, its integer continued by bytes with the high bit set.
  while (at < block.length && (block[at]! & 0xe0) === 0x20) {
    const prefix = block[at++]! & 0x1f;
    if (prefix === 0x1f) while (at < block.length && (block[at++]! & 0x80) !== 0);
  }
  const first = block[at];
  if (first === undefined || (first & 0x80) === 0) return undefined;
  const entry = STATIC_TABLE[(first & 0x7f) - 1];
  return entry?.[0] === ":status" ? Number(entry[1]) : undefined;
}

/** Strips a frame's padding (PADDED) and, for HEADERS, the priority fields (PRIORITY): what is left is its content. */
export function frameContent(type: number, flags: number, payload: Buffer): Buffer | undefined {
  let start = 0;
  let end = payload.length;
  if ((type === FRAME.DATA || type === FRAME.HEADERS) && (flags & FLAG.PADDED) !== 0) {
    if (payload.length < 1) return undefined;
    end -= payload[0]!;
    start = 1;
  }
  if (type === FRAME.HEADERS && (flags & FLAG.PRIORITY) !== 0) start += 5;
  return start <= end ? payload.subarray(start, end) : undefined;
}
