// GC pauses lined up with an open-loop client's requests: the pauses over a threshold and how many requests each held up.

/** A pause at least this long is counted (issue 53: with a request due every 0.5 ms, one this long delays at least one). */
export const LONG_PAUSE_MS = 0.25;

/**
 * `gcEvents`: the bench preload's `[startEpochMs, durationMs, kind]`; `due`, `done`: each request's
 * due and answered time, epoch ms (bench/lib/fixed-rate-client.mjs with `record`). Only the pauses
 * inside the requests' span count. A request is delayed by a pause when it was due before the
 * pause ended and answered after it began. Resolves to counts per second of the span, the long
 * pauses' lengths, the requests they delayed (each once) and per pause.
 */
export function gcDelays(gcEvents, due, done, thresholdMs = LONG_PAUSE_MS) {
  if (due.length === 0) return undefined;
  const from = Math.min(...due.slice(0, 1000));
  const to = Math.max(...done.slice(-1000));
  const spanSeconds = (to - from) / 1000;
  const inSpan = gcEvents.filter(([start, duration]) => start + duration >= from && start <= to);
  const long = inSpan.filter(([, duration]) => duration > thresholdMs).map(([start, duration]) => [start, start + duration, duration]);
  const delayed = new Uint8Array(due.length);
  const perPause = long.map(([start, end]) => {
    let count = 0;
    for (let index = 0; index < due.length; index++) {
      if (due[index] < end && done[index] > start) {
        count++;
        delayed[index] = 1;
      }
    }
    return count;
  });
  const durations = long.map(([, , duration]) => duration * 1000).sort((a, b) => a - b);
  const scavenges = inSpan.filter(([, , kind]) => kind === 1 || kind === "minor").length;
  return {
    gcsPerSecond: inSpan.length / spanSeconds,
    scavengesPerSecond: scavenges / spanSeconds,
    longPerSecond: long.length / spanSeconds,
    longCount: long.length,
    longMedianUs: durations.length ? durations[Math.floor(durations.length / 2)] : 0,
    longMaxUs: durations.at(-1) ?? 0,
    delayedShare: delayed.reduce((sum, bit) => sum + bit, 0) / due.length,
    delayedPerPause: perPause.length ? perPause.sort((a, b) => a - b)[Math.floor(perPause.length / 2)] : 0,
  };
}
