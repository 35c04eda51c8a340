// JSON text for the access line's values: strings quoted without a copy when nothing needs escaping, numbers and durations as JSON.stringify writes them.

/**
 * `JSON.stringify(text)`, faster for the usual string: a path, a method, a user agent with
 * nothing to escape is only quoted. Anything that needs care (a control character, `"`, `\`, or
 * any surrogate, paired or lone) goes to JSON.stringify itself, whose well-formed output escapes
 * a lone surrogate as `\udxxx` instead of writing a character UTF-8 cannot encode.
 */
export function jsonString(text: string): string {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    // One comparison for most characters: printable ASCII above `"` and below `\`, or above `\` and below the surrogates.
    if (code < 0x20 || code === 0x22 || code === 0x5c || (code >= 0xd800 && code <= 0xdfff)) return JSON.stringify(text);
  }
  return `"${text}"`;
}

/** `JSON.stringify(value)` for a number: `null` for NaN and the infinities, as JSON has no such numbers. */
export function jsonNumber(value: number): string {
  return Number.isFinite(value) ? `${value}` : "null";
}

/**
 * `JSON.stringify(Math.round(ms * 1000) / 1000)`: milliseconds to the microsecond (finer is noise
 * from the clock and the event loop, and longer numbers cost bytes per line). The access line
 * writes the usual durations digit by digit instead (json-bytes.ts); this is the text it must
 * match, and what it writes for the rest (negative, huge or not finite).
 */
export function jsonMilliseconds(ms: number): string {
  return jsonNumber(Math.round(ms * 1000) / 1000);
}
