// Parses Go-style durations ("500ms", "1s", "1m30s") into milliseconds.

const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  "µs": 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

// µ is written \u00b5 in the expressions: esbuild copies a regular expression's characters as they
// are, and the bundle must stay ASCII for the binary's loader (src/sea/sea-loader.cts).
const DURATION = /^(?:\d+(?:\.\d+)?(?:ns|us|\u00b5s|ms|s|m|h))+$/;
const PART = /(\d+(?:\.\d+)?)(ns|us|\u00b5s|ms|s|m|h)/g;

/**
 * Milliseconds in `text`, or undefined if it is not in Go's form. A bare number is refused
 * (is "5" seconds or milliseconds?), except "0", which Go accepts too and cannot be misread.
 */
export function parseDuration(text: string): number | undefined {
  if (text === "0") return 0;
  if (!DURATION.test(text)) return undefined;
  let total = 0;
  for (const [, amount, unit] of text.matchAll(PART)) total += Number(amount) * UNIT_MS[unit!]!;
  return Number.isFinite(total) ? total : undefined;
}

/** "1s", "1m30s", "1.5s", "250ms": how a duration is shown back (help text, logs). */
export function formatDuration(ms: number): string {
  if (ms === 0) return "0s";
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms >= 60_000) return `${Math.floor(ms / 60_000)}m${formatDuration(ms % 60_000)}`;
  if (ms < 1000) return `${ms}ms`;
  // Go's own form for fractions of a second: 25.3s, not 25300ms.
  return `${ms / 1000}s`;
}
