// Reading a daemon's /metrics by exact series, and waiting for a series to reach a value (the queue signals nothing else a test can wait on).
import { send } from "./http-client.js";

/** One sample line's value, by its exact series text (`name{labels}` as prom-client writes it). */
export function seriesValue(text: string, series: string): number | undefined {
  const line = text.split("\n").find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** The exposition text of `GET /metrics` on `metricsPort`. */
export async function scrapeText(metricsPort: number): Promise<string> {
  return (await send(metricsPort, "/metrics")).text();
}

/**
 * Scrapes until `series` equals `expected`; throws after `limitMs`. Needed where the proxy's
 * reaction to a client crosses the kernel (a request read and queued, a FIN seen) and no event
 * in this process says it happened; bounded, so a defect fails the test instead of hanging it.
 */
export async function untilSeries(metricsPort: number, series: string, expected: number, limitMs = 5_000): Promise<void> {
  const deadline = performance.now() + limitMs;
  let last: number | undefined;
  while (performance.now() < deadline) {
    last = seriesValue(await scrapeText(metricsPort), series);
    if (last === expected) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`${series} stayed ${last} for ${limitMs} ms, expected ${expected}`);
}
