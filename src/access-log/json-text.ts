// JSON text for the access line's values: strings quoted without a copy when nothing needs escaping, numbers as JSON.stringify writes them.

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
