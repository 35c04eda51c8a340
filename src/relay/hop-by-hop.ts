// Hop-by-hop header rules (RFC 9110 §7.6.1): which header names never cross the proxy, in either direction.
import { isNamed } from "./header-name.js";

/**
 * Always removed, lower-case. `expect` is here too: the relay answers `100 Continue` itself, as
 * nginx and node:http do, so an app that ignores the expectation never makes curl wait a second.
 * `http2-settings` is connection-specific (RFC 9113 §3.2.1, the h2c upgrade's): nghttp2 accepts
 * it from a peer but node:http2 throws on sending it, in a head, a 1xx or trailers alike.
 */
const ALWAYS_REMOVED = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "expect",
  "http2-settings",
]);

/** The names above by length, so most header names are rejected by their length alone, and none is lower-cased. */
const CANDIDATES_BY_LENGTH: readonly (readonly string[] | undefined)[] = (() => {
  const byLength: string[][] = [];
  for (const name of ALWAYS_REMOVED) (byLength[name.length] ??= []).push(name);
  return byLength;
})();

/**
 * Names listed in the Connection header values (one field's value, or every one's), lower-case;
 * empty when there are none. `close` and `keep-alive` are connection options, not header names,
 * but removing a header of that name is harmless, so they are not special-cased.
 */
export function connectionListedNames(connectionValues: string | readonly string[]): ReadonlySet<string> {
  // The usual value lists no header names: skip the split, with no string made (this runs per message).
  if (typeof connectionValues === "string") {
    if (isPlainConnectionOption(connectionValues)) return NO_LISTED_NAMES;
    connectionValues = [connectionValues];
  } else if (connectionValues.length === 1 && isPlainConnectionOption(connectionValues[0]!)) return NO_LISTED_NAMES;
  const names = new Set<string>();
  for (const value of connectionValues) {
    for (const token of value.split(",")) {
      const name = token.trim().toLowerCase();
      if (name !== "") names.add(name);
    }
  }
  return names;
}

/** "The Connection header listed no header names", shared so it is never reallocated. */
export const NO_LISTED_NAMES: ReadonlySet<string> = new Set();

function isPlainConnectionOption(value: string): boolean {
  return isNamed(value, "keep-alive") || isNamed(value, "close");
}

/** Whether a header (any case) is hop-by-hop, given the names its message's Connection header listed. */
export function isHopByHop(name: string, listed: ReadonlySet<string>): boolean {
  if (listed.size > 0 && listed.has(name.toLowerCase())) return true;
  const candidates = CANDIDATES_BY_LENGTH[name.length];
  if (candidates === undefined) return false;
  for (let index = 0; index < candidates.length; index++) if (isNamed(name, candidates[index]!)) return true;
  return false;
}
