// The one `request` line of CONTRACT §11, written field by field as UTF-8 straight into the batch's buffer: the keys are known up front, so no object is built for a serializer to walk and no string for the line.
import type { AccessLogEntry } from "./access-log-entry.js";
import { NO_ROOM, writeBytes, writeJsonMilliseconds, writeJsonNumber, writeJsonString, writeJsonText } from "./json-bytes.js";
import type { LineEncoder } from "./line-batch.js";

/** What a pino record puts around the fields, taken from the logger once (see access-log.ts). */
export interface LineFrame {
  /** pino's numeric level for info (30). */
  readonly level: number;
  /** pino's time field as it writes it, `,"time":<epoch ms>`, read per line. */
  readonly time: () => string;
  /**
   * When the time field is pino's default (`,"time":` and `Date.now()`), that clock: the line
   * then writes the digits itself instead of asking `time` for a string.
   */
  readonly epochMs?: (() => number) | undefined;
  /** The logger's bindings as pino writes them (`,"name":"readiness-proxy"`), or "". */
  readonly bindings: string;
  /** pino's message key (`msg`). */
  readonly messageKey: string;
}

const ascii = (text: string) => Buffer.from(text, "utf8");
const EMPTY = Buffer.alloc(0);
const KEYS = {
  time: ascii(`,"time":`),
  path: ascii(`,"path":`),
  protocol: ascii(`,"protocol":`),
  status: ascii(`,"status":`),
  grpcStatus: ascii(`,"grpcStatus":`),
  bytesSent: ascii(`,"bytesSent":`),
  durationMs: ascii(`,"durationMs":`),
  upstreamMs: ascii(`,"upstreamMs":`),
  queueMs: ascii(`,"queueMs":`),
  requestId: ascii(`,"requestId":`),
  traceId: ascii(`,"traceId":`),
  connectRetries: ascii(`,"connectRetries":`),
  remoteAddr: ascii(`,"remoteAddr":`),
  userAgent: ascii(`,"userAgent":`),
  aborted: ascii(`,"aborted":true`),
  timeoutIdle: ascii(`,"timeout":"idle"`),
  timeoutDuration: ascii(`,"timeout":"duration"`),
};

/** Bytes a line takes beyond its strings: the keys, the frame and five numbers of at most 24 characters each. */
const FIXED_BYTES = 512;
/** A string's worst case: `\uXXXX` for every UTF-16 unit. */
const BYTES_PER_UNIT = 6;

/**
 * Writes lines of the exact shape pino gave them (`level`, `time`, the bindings, then the fields
 * in the order below, then `msg`), optional fields left out when absent. pino's generic walk over
 * an object per line was most of the access log's cost; then concatenating the line as a string
 * and encoding it was most of what was left (bench/README.md, "Access log").
 */
export class AccessLineWriter implements LineEncoder<AccessLogEntry> {
  /** `{"level":30` */
  readonly #head: Buffer;
  /** The bindings, then `,"method":`. */
  readonly #bindingsAndMethod: Buffer;
  /** `,"msg":"request"}` and the newline. */
  readonly #tail: Buffer;
  readonly #time: () => string;
  readonly #epochMs: (() => number) | undefined;
  readonly #fixedBytes: number;
  // The line being written: where, up to where, and the offset reached, NO_ROOM from the first value that did not fit (every later write is then skipped).
  #out: Buffer = EMPTY;
  #at = 0;
  #limit = 0;

  constructor(frame: LineFrame) {
    this.#head = ascii(`{"level":${frame.level}`);
    this.#time = frame.time;
    this.#epochMs = frame.epochMs;
    this.#bindingsAndMethod = Buffer.from(`${frame.bindings},"method":`, "utf8");
    this.#tail = Buffer.from(`,${JSON.stringify(frame.messageKey)}:"request"}\n`, "utf8");
    this.#fixedBytes = FIXED_BYTES + this.#bindingsAndMethod.length + this.#tail.length;
  }

  /** At least the bytes {@link encode} can need for `entry`. */
  maxBytes(entry: AccessLogEntry): number {
    const strings = entry.method.length + entry.path.length + entry.protocol.length + entry.requestId.length + (entry.traceId?.length ?? 0) + (entry.remoteAddr?.length ?? 0) + (entry.userAgent?.length ?? 0);
    return this.#fixedBytes + (this.#epochMs === undefined ? this.#time().length * 3 : 0) + strings * BYTES_PER_UNIT;
  }

  /** Writes the line (newline included) at `offset`; returns where it ends, or NO_ROOM when it does not fit before `limit`. */
  encode(entry: AccessLogEntry, buffer: Buffer, offset: number, limit: number): number {
    this.#out = buffer;
    this.#at = offset;
    this.#limit = limit;
    this.#bytes(this.#head);
    if (this.#epochMs === undefined) this.#text(this.#time());
    else {
      this.#bytes(KEYS.time);
      this.#number(this.#epochMs());
    }
    this.#bytes(this.#bindingsAndMethod);
    this.#string(entry.method, 0, entry.method.length);
    this.#bytes(KEYS.path);
    this.#string(entry.path, 0, pathEnd(entry.path));
    this.#bytes(KEYS.protocol);
    this.#string(entry.protocol, 0, entry.protocol.length);
    this.#bytes(KEYS.status);
    this.#number(entry.status);
    if (entry.grpcStatus !== undefined) {
      this.#bytes(KEYS.grpcStatus);
      this.#number(entry.grpcStatus);
    }
    this.#bytes(KEYS.bytesSent);
    this.#number(entry.bytesSent);
    this.#bytes(KEYS.durationMs);
    this.#milliseconds(entry.durationMs);
    if (entry.upstreamMs !== undefined) {
      this.#bytes(KEYS.upstreamMs);
      this.#milliseconds(entry.upstreamMs);
    }
    if (entry.queueMs !== undefined) {
      this.#bytes(KEYS.queueMs);
      this.#milliseconds(entry.queueMs);
    }
    this.#bytes(KEYS.requestId);
    this.#string(entry.requestId, 0, entry.requestId.length);
    const traceId = entry.traceId;
    if (traceId !== undefined) {
      this.#bytes(KEYS.traceId);
      this.#string(traceId, 0, traceId.length);
    }
    if (entry.connectRetries !== undefined) {
      this.#bytes(KEYS.connectRetries);
      this.#number(entry.connectRetries);
    }
    const remoteAddr = entry.remoteAddr;
    if (remoteAddr !== undefined) {
      this.#bytes(KEYS.remoteAddr);
      this.#string(remoteAddr, peerIpStart(remoteAddr), remoteAddr.length);
    }
    const userAgent = entry.userAgent;
    if (userAgent !== undefined) {
      this.#bytes(KEYS.userAgent);
      this.#string(userAgent, 0, userAgent.length);
    }
    if (entry.aborted === true) this.#bytes(KEYS.aborted);
    if (entry.timeout !== undefined) this.#bytes(entry.timeout === "idle" ? KEYS.timeoutIdle : KEYS.timeoutDuration);
    this.#bytes(this.#tail);
    return this.#at;
  }

  #bytes(bytes: Uint8Array): void {
    if (this.#at !== NO_ROOM) this.#at = writeBytes(bytes, this.#out, this.#at, this.#limit);
  }

  #string(text: string, start: number, end: number): void {
    if (this.#at !== NO_ROOM) this.#at = writeJsonString(text, start, end, this.#out, this.#at, this.#limit);
  }

  #text(json: string): void {
    if (this.#at !== NO_ROOM) this.#at = writeJsonText(json, this.#out, this.#at, this.#limit);
  }

  #number(value: number): void {
    if (this.#at !== NO_ROOM) this.#at = writeJsonNumber(value, this.#out, this.#at, this.#limit);
  }

  #milliseconds(ms: number): void {
    if (this.#at !== NO_ROOM) this.#at = writeJsonMilliseconds(ms, this.#out, this.#at, this.#limit);
  }

  /** The line as a string, for a stream that takes strings (tests, pino destinations). */
  line(entry: AccessLogEntry): string {
    const buffer = Buffer.allocUnsafe(this.maxBytes(entry));
    return buffer.toString("utf8", 0, this.encode(entry, buffer, 0, buffer.length));
  }
}

/** Where the target's path ends: at its first `?` (a path, or, absolute-form, scheme, authority and path, as sent). */
function pathEnd(target: string): number {
  const query = target.indexOf("?");
  return query < 0 ? target.length : query;
}

/** The target up to its first `?`. */
export function withoutQuery(target: string): string {
  return target.slice(0, pathEnd(target));
}

/** Where the address operators grep for starts: after `::ffff:` in an IPv4 peer on a dual-stack listener (`::ffff:10.0.0.7`), else at 0. */
function peerIpStart(address: string): number {
  return address.startsWith("::ffff:") && address.includes(".") ? 7 : 0;
}

/** `::ffff:10.0.0.7` as `10.0.0.7`; any other address as is. */
export function peerIp(address: string | undefined): string | undefined {
  return address === undefined ? undefined : address.slice(peerIpStart(address));
}
