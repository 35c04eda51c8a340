// The one `request` line of CONTRACT §11 as text, written field by field: the keys are known up front, so no object is built for a serializer to walk.
import type { AccessLogEntry } from "./access-log-entry.js";
import { jsonMilliseconds, jsonNumber, jsonString } from "./json-text.js";

/** What a pino record puts around the fields, taken from the logger once (see access-log.ts). */
export interface LineFrame {
  /** pino's numeric level for info (30). */
  readonly level: number;
  /** pino's time field as it writes it, `,"time":<epoch ms>`, read per line. */
  readonly time: () => string;
  /** The logger's bindings as pino writes them (`,"name":"readiness-proxy"`), or "". */
  readonly bindings: string;
  /** pino's message key (`msg`). */
  readonly messageKey: string;
}

/**
 * Builds lines of the exact shape pino gave them (`level`, `time`, the bindings, then the fields
 * in the order below, then `msg`), optional fields left out when absent. A template string of
 * known keys costs one concatenation per field; pino's generic walk over an object per line was
 * most of the access log's cost.
 */
export class AccessLineWriter {
  readonly #head: string;
  readonly #bindings: string;
  readonly #tail: string;
  readonly #time: () => string;

  constructor(frame: LineFrame) {
    this.#head = `{"level":${frame.level}`;
    this.#time = frame.time;
    this.#bindings = frame.bindings;
    this.#tail = `,${jsonString(frame.messageKey)}:"request"}\n`;
  }

  /** One line, newline included. */
  line(entry: AccessLogEntry): string {
    let line = `${this.#head}${this.#time()}${this.#bindings},"method":${jsonString(entry.method)},"path":${jsonString(withoutQuery(entry.path))},"protocol":${jsonString(entry.protocol)},"status":${jsonNumber(entry.status)}`;
    if (entry.grpcStatus !== undefined) line += `,"grpcStatus":${jsonNumber(entry.grpcStatus)}`;
    line += `,"bytesSent":${jsonNumber(entry.bytesSent)},"durationMs":${jsonMilliseconds(entry.durationMs)}`;
    if (entry.upstreamMs !== undefined) line += `,"upstreamMs":${jsonMilliseconds(entry.upstreamMs)}`;
    if (entry.queueMs !== undefined) line += `,"queueMs":${jsonMilliseconds(entry.queueMs)}`;
    line += `,"requestId":${jsonString(entry.requestId)}`;
    const remoteAddr = peerIp(entry.remoteAddr);
    if (remoteAddr !== undefined) line += `,"remoteAddr":${jsonString(remoteAddr)}`;
    if (entry.userAgent !== undefined) line += `,"userAgent":${jsonString(entry.userAgent)}`;
    if (entry.aborted === true) line += `,"aborted":true`;
    return line + this.#tail;
  }
}

/** The target up to its first `?`: a path (or, absolute-form, scheme, authority and path) as sent. */
export function withoutQuery(target: string): string {
  const query = target.indexOf("?");
  return query < 0 ? target : target.slice(0, query);
}

/** `::ffff:10.0.0.7` (an IPv4 peer on a dual-stack listener) as `10.0.0.7`, the form operators grep for; any other address as is. */
export function peerIp(address: string | undefined): string | undefined {
  return address !== undefined && address.startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address;
}
