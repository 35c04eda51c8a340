// Parsers for option values (a flag's, or an environment variable's): text -> a Config value, or a usage error naming the input.
import { usageError } from "../errors.js";
import { parseDuration } from "./duration.js";

/** A Go-style duration; a bare number (other than "0") or any other form is a usage error. */
export function parseDurationOption(input: string, text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined) throw usageError(input, "expected a duration like 500ms, 1s or 1m30s", text);
  return ms;
}

/** A duration that must be above 0 (a timeout of 0 would fail everything at once). */
export function parsePositiveDurationOption(input: string, text: string): number {
  const ms = parseDurationOption(input, text);
  if (ms === 0) throw usageError(input, "expected a duration above 0", text);
  return ms;
}

/**
 * A decimal integer in `min..max`. Only digits: "0x10", "1e3", "+4", " 4" and "4.0" are refused
 * rather than read as something the operator may not have meant. `expected` is the range as
 * the message names it (0 may be accepted without being named, as `--max-concurrency`'s "off").
 */
export function parseIntegerOption(input: string, text: string, min: number, max: number, expected = `${min}..${max}`): number {
  const value = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(value >= min && value <= max)) throw usageError(input, `expected an integer ${expected}`, text);
  return value;
}

/** How a boolean option's environment variable may say on and off. */
const SWITCH_VALUES: Readonly<Record<string, boolean>> = { "1": true, true: true, "0": false, false: false };

/** An on/off environment variable: `1`/`true` or `0`/`false`; anything else is a usage error naming the variable. */
export function parseSwitchOption(input: string, text: string): boolean {
  const value = SWITCH_VALUES[text];
  if (value === undefined) throw usageError(input, "expected 1, true, 0 or false", text);
  return value;
}

/** An origin-form path (a query allowed): no spaces, no control bytes, nothing undici would refuse. */
const HEALTH_PATH = /^\/[\x21-\x7e]*$/;

/** `--readiness-upstream-path`: undefined (not given) or an origin-form path. */
export function parseHealthPath(input: string, text: string | undefined): string | undefined {
  if (text !== undefined && !HEALTH_PATH.test(text)) {
    throw usageError(input, "expected a path starting with / without spaces or control characters", text);
  }
  return text;
}
