// The one authority rule: what may reach an app as Host or :authority, whichever protocol the client spoke and whichever the app speaks.
import { isIPv6 } from "node:net";

/** RFC 3986 §3.2.2 IPvFuture, inside the brackets. */
const IP_FUTURE = /^[vV][0-9A-Fa-f]+\.[A-Za-z0-9\-._~!$&'()*+,;=:]+$/;
/** RFC 3986 §3.2.3: `port = *DIGIT`. */
const PORT = /^[0-9]*$/;
/** RFC 3986 §3.2.2 reg-name (unreserved, pct-encoded, sub-delims), not empty: the app needs a name to route by; with its optional port, tested whole, so no slice of the value is made (this runs for every request). */
const REG_NAME_AND_PORT = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})+(?::[0-9]*)?$/;

/**
 * Whether `value` is an authority an app may be sent (RFC 9110 §7.2: `uri-host [":" port]`,
 * RFC 3986 §3.2.2: an IP-literal or a reg-name, no userinfo), with nginx's two refusals beyond
 * the grammar: an empty host, and `..` in a name (ngx_http_validate_host; an app that maps Host
 * to a directory must never be handed a parent). No path, query, space or `@` can pass, so a
 * translation never turns it into another target, and no zone id in an IPv6 literal (RFC 6874
 * keeps those out of Host). Our h2 listener and both HTTP/1.1 pairings apply this, and only this.
 */
export function authorityIsValid(value: string): boolean {
  let rest: string;
  if (value.charCodeAt(0) === 0x5b /* "[" */) {
    const close = value.indexOf("]");
    if (close === -1) return false;
    const literal = value.slice(1, close);
    if (!IP_FUTURE.test(literal) && (literal.includes("%") || !isIPv6(literal))) return false;
    rest = value.slice(close + 1);
  } else {
    // A reg-name has no ":", and a port no ".": `..` anywhere is in the name.
    return REG_NAME_AND_PORT.test(value) && !value.includes("..");
  }
  return rest === "" || (rest.charCodeAt(0) === 0x3a /* ":" */ && PORT.test(rest.slice(1)));
}
