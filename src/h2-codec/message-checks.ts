// HTTP/2 message validity (RFC 9113 §8.1.1, §8.2, §8.3): what makes a decoded header list malformed, so that a relay never forwards it.
import { fieldValue } from "./field-list.js";

/**
 * The facts one check leaves behind: why a list was refused (for the log and metrics; never sent
 * to the peer), and the `content-length` that DATA must then sum to (-1: none).
 */
export class MessageFacts {
  reason = "";
  contentLength = -1;
}

/** Fields that belong to one connection and never appear in HTTP/2 (RFC 9113 §8.2.2); `te` is checked on its own. */
const CONNECTION_SPECIFIC = new Set(["connection", "proxy-connection", "keep-alive", "transfer-encoding", "upgrade"]);

/** Request pseudo-fields, as bits: each may appear once (RFC 9113 §8.3.1). */
const PSEUDO_METHOD = 1;
const PSEUDO_SCHEME = 2;
const PSEUDO_PATH = 4;
const PSEUDO_AUTHORITY = 8;
const REQUEST_PSEUDO: ReadonlyMap<string, number> = new Map([
  [":method", PSEUDO_METHOD],
  [":scheme", PSEUDO_SCHEME],
  [":path", PSEUDO_PATH],
  [":authority", PSEUDO_AUTHORITY],
]);

/**
 * A field name's octets: lowercase token characters only (RFC 9113 §8.2.1, §8.2: no uppercase, no
 * controls, space, DEL or octets above 0x7e, none of the separators RFC 9110 §5.6.2 excludes).
 */
const NAME_OCTET = new Uint8Array(256);
for (const char of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyz") NAME_OCTET[char.charCodeAt(0)] = 1;

/**
 * A field value may not hold NUL, CR or LF anywhere, nor begin or end with a space or tab (RFC 9113
 * §8.2.1); nor any other control but HTAB, nor DEL (RFC 9110 §5.5: invalid; nghttp2 drops such a
 * field, we refuse the message rather than forward a list that differs from the one sent).
 */
function valueIsValid(value: string): boolean {
  const length = value.length;
  if (length === 0) return true;
  const first = value.charCodeAt(0);
  const last = value.charCodeAt(length - 1);
  if (first === 0x20 || first === 0x09 || last === 0x20 || last === 0x09) return false;
  for (let i = 0; i < length; i++) {
    const code = value.charCodeAt(i);
    if ((code < 0x20 && code !== 0x09) || code === 0x7f) return false;
  }
  return true;
}

/** Octets a set allows, as a table (one lookup per octet). */
function octets(allowed: string, obsText = false): Uint8Array {
  const table = new Uint8Array(256);
  for (const char of allowed) table[char.charCodeAt(0)] = 1;
  if (obsText) table.fill(1, 0x80, 0x100);
  return table;
}

const TOKEN = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
/** What nghttp2 lets through in each pseudo-field and in host (`lib/nghttp2_http.c`, `nghttp2_helper.c`): the relay forwarded no more before the codec. */
const METHOD_OCTET = octets(TOKEN);
const PATH_OCTET = octets(Array.from({ length: 0x7f - 0x21 }, (_, i) => String.fromCharCode(0x21 + i)).join(""), true);
const AUTHORITY_OCTET = octets("!$%&'()*+,-.0123456789:;=ABCDEFGHIJKLMNOPQRSTUVWXYZ[]_abcdefghijklmnopqrstuvwxyz~");

function allIn(value: string, table: Uint8Array): boolean {
  if (value.length === 0) return false;
  for (let i = 0; i < value.length; i++) if (table[value.charCodeAt(i)] !== 1) return false;
  return true;
}

/** A :scheme is a URI scheme (RFC 3986 §3.1): a letter, then letters, digits, "+", "-" or ".". */
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*$/;

/** Each request pseudo-field's own syntax, beyond the value rules all fields share. */
function pseudoValueIsValid(bit: number, value: string): boolean {
  if (bit === PSEUDO_METHOD) return allIn(value, METHOD_OCTET);
  if (bit === PSEUDO_PATH) return allIn(value, PATH_OCTET);
  if (bit === PSEUDO_AUTHORITY) return allIn(value, AUTHORITY_OCTET);
  return SCHEME.test(value);
}

function nameIsValid(name: string, from: number): boolean {
  const length = name.length;
  if (length === from) return false;
  for (let i = from; i < length; i++) if (NAME_OCTET[name.charCodeAt(i)] !== 1) return false;
  return true;
}

/** The rules every regular field shares, in heads and trailers; sets `facts.reason` and returns false on the first broken one. */
function regularFieldIsValid(name: string, value: string, facts: MessageFacts): boolean {
  if (!nameIsValid(name, 0)) return refuse(facts, "invalid field name");
  if (!valueIsValid(value)) return refuse(facts, "invalid field value");
  if (CONNECTION_SPECIFIC.has(name)) return refuse(facts, "connection-specific field");
  // Compared as nghttp2 does, case aside (a token's case carries no meaning, RFC 9110 §5.6.2).
  if (name === "te" && value.toLowerCase() !== "trailers") return refuse(facts, "te other than trailers");
  if (name === "content-length") {
    const length = parseContentLength(value);
    // A second one is refused even when it repeats the first, as nghttp2 does (RFC 9110 §8.6 allows either).
    if (length < 0 || facts.contentLength >= 0) return refuse(facts, "invalid content-length");
    facts.contentLength = length;
  }
  return true;
}

/** Checks a request head (server side). `fields` is [name, value, ...] as the HPACK decoder made it. */
export function checkRequestHead(fields: readonly string[], facts: MessageFacts): boolean {
  facts.reason = "";
  facts.contentLength = -1;
  let seen = 0;
  let regular = false;
  let method = "";
  let path = "";
  let scheme = "";
  let host = false;
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i] as string;
    const value = fields[i + 1] as string;
    if (name.charCodeAt(0) === 0x3a /* ":" */) {
      const bit = REQUEST_PSEUDO.get(name);
      if (bit === undefined) return refuse(facts, "unknown pseudo-field");
      if (regular) return refuse(facts, "pseudo-field after a regular field");
      if (seen & bit) return refuse(facts, "repeated pseudo-field");
      if (!valueIsValid(value) || !pseudoValueIsValid(bit, value)) return refuse(facts, "invalid pseudo-field value");
      seen |= bit;
      if (bit === PSEUDO_METHOD) method = value;
      else if (bit === PSEUDO_PATH) path = value;
      else if (bit === PSEUDO_SCHEME) scheme = value;
      continue;
    }
    regular = true;
    if (!regularFieldIsValid(name, value, facts)) return false;
    if (name === "host") {
      if (host || !allIn(value, AUTHORITY_OCTET)) return refuse(facts, "invalid or repeated host");
      host = true;
    }
  }
  if ((seen & PSEUDO_METHOD) === 0) return refuse(facts, "no :method");
  if (method === "CONNECT") {
    // RFC 9113 §8.5: only :method and :authority.
    if (seen !== (PSEUDO_METHOD | PSEUDO_AUTHORITY)) return refuse(facts, "CONNECT with :scheme or :path, or without :authority");
    return true;
  }
  if ((seen & (PSEUDO_SCHEME | PSEUDO_PATH)) !== (PSEUDO_SCHEME | PSEUDO_PATH)) return refuse(facts, "no :scheme or :path");
  if (path.length === 0) return refuse(facts, "empty :path");
  // RFC 9113 §8.3.1: for http and https, an origin-form path, or "*" for OPTIONS only.
  const web = /^https?$/i.test(scheme);
  if (web && path.charCodeAt(0) !== 0x2f /* "/" */ && !(path === "*" && method === "OPTIONS")) return refuse(facts, "not an origin-form :path");
  // RFC 9113 §8.3.1 leaves :authority optional, but an app behind us needs a Host (RFC 9110 §7.2), and
  // nghttp2 (what node:http2 served before) refuses a request with neither.
  if ((seen & PSEUDO_AUTHORITY) === 0 && !host) return refuse(facts, "no :authority or host");
  return true;
}

/** Checks a response head (client side): `:status` once, three digits, and nothing else pseudo. */
export function checkResponseHead(fields: readonly string[], facts: MessageFacts): boolean {
  facts.reason = "";
  facts.contentLength = -1;
  let status = "";
  let regular = false;
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i] as string;
    const value = fields[i + 1] as string;
    if (name.charCodeAt(0) === 0x3a /* ":" */) {
      if (name !== ":status") return refuse(facts, "unknown pseudo-field");
      if (regular) return refuse(facts, "pseudo-field after a regular field");
      if (status !== "") return refuse(facts, "repeated pseudo-field");
      if (!/^[1-9][0-9][0-9]$/.test(value)) return refuse(facts, "invalid :status");
      status = value;
      continue;
    }
    regular = true;
    if (!regularFieldIsValid(name, value, facts)) return false;
  }
  if (status === "") return refuse(facts, "no :status");
  return true;
}

/** Checks trailers (either side): regular fields only (RFC 9113 §8.1). */
export function checkTrailers(fields: readonly string[], facts: MessageFacts): boolean {
  facts.reason = "";
  const contentLength = facts.contentLength;
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i] as string;
    if (name.charCodeAt(0) === 0x3a) return refuse(facts, "pseudo-field in trailers");
    if (!regularFieldIsValid(name, fields[i + 1] as string, facts)) return false;
  }
  // A content-length among trailers says nothing about the body already counted.
  facts.contentLength = contentLength;
  return true;
}

/** A content-length's value as a number, or -1 unless it is digits only (and safely an integer). */
function parseContentLength(value: string): number {
  if (value.length === 0 || value.length > 15) return -1;
  let length = 0;
  for (let i = 0; i < value.length; i++) {
    const digit = value.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) return -1;
    length = length * 10 + digit;
  }
  return length;
}

function refuse(facts: MessageFacts, reason: string): false {
  facts.reason = reason;
  return false;
}

/** A 204's content-length may only be "0", as written (RFC 9110 §8.6 forbids any; nghttp2 lets that one through, servers send it). */
export function contentLengthIsZero(fields: readonly string[]): boolean {
  const contentLength = fieldValue(fields, "content-length");
  return contentLength === undefined || contentLength === "0";
}

/** Whether a request head's :method is HEAD (pseudo-fields come first: the scan stops at the first regular one). */
export function isHeadRequest(fields: readonly string[]): boolean {
  for (let i = 0; i < fields.length && (fields[i] as string).charCodeAt(0) === 0x3a; i += 2) {
    if (fields[i] === ":method") return fields[i + 1] === "HEAD";
  }
  return false;
}
