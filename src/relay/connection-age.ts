// --max-connection-age (CONTRACT §15), the rule both protocols share: each client connection's own limit, the maximum less up to 10 % at random, one timer per connection on the daemon's timers.
import type { Timers } from "../timers.js";

/** At most this share is taken off the maximum, so a fleet's connections opened together do not all reconnect together. */
const JITTER = 0.1;

/** One connection's age limit: `maxAgeMs` less up to 10 %. */
export function jitteredAgeMs(maxAgeMs: number, random: () => number = Math.random): number {
  return Math.round(maxAgeMs * (1 - JITTER * random()));
}

/**
 * Calls `onAged` once the connection reaches its jittered age; returns what cancels it (the
 * connection closed first). Nothing is scheduled when the limit is off (0). The timer never keeps
 * the process alive: the listener does that.
 */
export function scheduleConnectionAge(timers: Timers, maxAgeMs: number, onAged: () => void): () => void {
  if (maxAgeMs <= 0) return noop;
  const timer = timers.setTimeout(onAged, jitteredAgeMs(maxAgeMs));
  return () => timers.clearTimeout(timer);
}

function noop(): void {}
