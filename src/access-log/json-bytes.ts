// JSON values written as UTF-8 straight into a buffer, each within a limit: strings copied byte by byte when plain ASCII, integers and durations digit by digit, anything rarer through json-text.ts.
import { jsonMilliseconds, jsonNumber, jsonString } from "./json-text.js";

/** What a writer returns instead of the new offset when the value does not fit before the limit (what it wrote past the offset is then garbage). */
export const NO_ROOM = -1;

const QUOTE = 0x22;
const DIGIT_ZERO = 0x30;
const FULL_STOP = 0x2e;

/**
 * `jsonString(text.slice(start, end))` written at `offset`. The usual value (a method, a path, a
 * UUID, a user agent) is printable ASCII with nothing to escape: its UTF-16 units are its bytes,
 * copied in the same loop that checks them, with no string made for it. Anything else (a control
 * character, `"`, `\`, or any unit above 0x7f) goes through jsonString and UTF-8 encoding.
 */
export function writeJsonString(text: string, start: number, end: number, buffer: Buffer, offset: number, limit: number): number {
  // Every unit takes at least one byte, escaped or encoded: if the units do not fit, the bytes cannot.
  if (offset + (end - start) + 2 > limit) return NO_ROOM;
  buffer[offset] = QUOTE;
  let at = offset + 1;
  for (let index = start; index < end; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code === 0x22 || code === 0x5c || code > 0x7f) return writeJsonText(jsonString(start === 0 && end === text.length ? text : text.slice(start, end)), buffer, offset, limit);
    buffer[at++] = code;
  }
  buffer[at] = QUOTE;
  return at + 1;
}

/** JSON text already made (any Unicode, well-formed) written as UTF-8, measured first so that it is never cut short. */
export function writeJsonText(json: string, buffer: Buffer, offset: number, limit: number): number {
  // UTF-8 takes at most 3 bytes per UTF-16 unit: with that much room, no need to measure.
  if (json.length * 3 > limit - offset && Buffer.byteLength(json) > limit - offset) return NO_ROOM;
  return offset + buffer.write(json, offset);
}

/** Constant bytes (a key and its punctuation, encoded once). */
export function writeBytes(bytes: Uint8Array, buffer: Buffer, offset: number, limit: number): number {
  if (offset + bytes.length > limit) return NO_ROOM;
  buffer.set(bytes, offset);
  return offset + bytes.length;
}

/**
 * `jsonNumber(value)`: a non-negative safe integer (a status, a byte count, an epoch time in
 * milliseconds) digit by digit, anything else as JSON.stringify writes it. Above 2^31 the value
 * is split at 10^9 into two parts that small-integer arithmetic can take: `%` on a double is a
 * call into C per digit (0.7 µs for the time field's 13 digits in the loaded proxy).
 */
export function writeJsonNumber(value: number, buffer: Buffer, offset: number, limit: number): number {
  if ((value | 0) === value && value >= 0) return writeSmallInteger(value, 0, buffer, offset, limit);
  if (!(Number.isSafeInteger(value) && value >= 0)) return writeJsonText(jsonNumber(value), buffer, offset, limit);
  let high = Math.floor(value / BILLION);
  let low = value - high * BILLION;
  // value / 10^9 is rounded, so its floor can be one off either way: the remainder says which.
  if (low < 0) {
    high -= 1;
    low += BILLION;
  } else if (low >= BILLION) {
    high += 1;
    low -= BILLION;
  }
  const at = writeSmallInteger(high, 0, buffer, offset, limit);
  return at === NO_ROOM ? NO_ROOM : writeSmallInteger(low, 9, buffer, at, limit);
}

const BILLION = 1_000_000_000;

/** A non-negative integer below 2^31 in decimal, with leading zeros up to `minDigits`. */
function writeSmallInteger(value: number, minDigits: number, buffer: Buffer, offset: number, limit: number): number {
  let digits = 1;
  for (let rest = value; rest >= 10; rest = (rest / 10) | 0) digits++;
  if (digits < minDigits) digits = minDigits;
  if (offset + digits > limit) return NO_ROOM;
  let rest = value;
  for (let at = offset + digits - 1; at >= offset; at--) {
    const tenth = (rest / 10) | 0;
    buffer[at] = DIGIT_ZERO + (rest - tenth * 10);
    rest = tenth;
  }
  return offset + digits;
}

/** Below this many microseconds (35 minutes) a duration is written from integers; above, by jsonMilliseconds' own fallback. */
const INTEGER_MICROS_LIMIT = 0x7fffffff;

/**
 * `jsonMilliseconds(ms)` (the duration rounded to the microsecond, as JSON.stringify writes that
 * double): the whole milliseconds digit by digit, then up to three fraction digits with
 * trailing zeros dropped. Below 2^31 µs that is the same text: a decimal of at most three
 * fraction digits is the shortest that reads back as the double.
 */
export function writeJsonMilliseconds(ms: number, buffer: Buffer, offset: number, limit: number): number {
  const micros = Math.round(ms * 1000);
  if (!(micros >= 0 && micros <= INTEGER_MICROS_LIMIT)) return writeJsonText(jsonMilliseconds(ms), buffer, offset, limit);
  const whole = (micros / 1000) | 0;
  const fraction = micros - whole * 1000;
  let at = writeJsonNumber(whole, buffer, offset, limit);
  if (at === NO_ROOM || fraction === 0) return at;
  const digits = fraction % 100 === 0 ? 1 : fraction % 10 === 0 ? 2 : 3;
  if (at + 1 + digits > limit) return NO_ROOM;
  buffer[at++] = FULL_STOP;
  buffer[at++] = DIGIT_ZERO + ((fraction / 100) | 0);
  if (digits > 1) buffer[at++] = DIGIT_ZERO + (((fraction / 10) | 0) % 10);
  if (digits > 2) buffer[at++] = DIGIT_ZERO + (fraction % 10);
  return at;
}
