// JSON text for the access line's values: strings quoted without a copy when nothing needs escaping, numbers as JSON.stringify writes them, durations from integers.

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

/** Below this many microseconds (35 minutes) a duration is formatted from integers; above, by {@link jsonNumber}. */
const INTEGER_MICROS_LIMIT = 0x7fffffff;

/** `.001` to `.999` with trailing zeros dropped, `""` for 0: built at the first duration, not at start. */
let fractions: string[] | undefined;

/**
 * `JSON.stringify(Math.round(ms * 1000) / 1000)`: milliseconds to the microsecond (finer is noise
 * from the clock and the event loop, and longer numbers cost bytes per line), written from
 * two integers (the whole milliseconds and a table of the 999 fractions). Why: V8 writes a
 * fractional double with a shortest-digits search, and in the proxy no two durations are alike,
 * so its number-to-string cache never helps: measured in the running proxy, the line took 2.8-3.5
 * µs with two durations formatted so and 1.9-2.0 µs with this (bench/README.md, "Access log").
 * Below 2^31 µs the text is the same: a decimal of at most three fraction digits is the
 * shortest that reads back as that double. Negative, huge or non-finite values take jsonNumber.
 */
export function jsonMilliseconds(ms: number): string {
  const micros = Math.round(ms * 1000);
  if (!(micros >= 0 && micros <= INTEGER_MICROS_LIMIT)) return jsonNumber(micros / 1000);
  const whole = (micros / 1000) | 0;
  fractions ??= Array.from({ length: 1000 }, (_, fraction) => (fraction === 0 ? "" : `.${String(fraction).padStart(3, "0").replace(/0+$/, "")}`));
  return `${whole}${fractions[micros - whole * 1000]!}`;
}
