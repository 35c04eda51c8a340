// Interim answers on the HTTP/1.1 side: the 100 Continue the relay owes, and an app's 101 checked against the upgrade that was asked for.
import type { ParsedHead } from "./llhttp-binding.js";
import { headerValue, type RequestHead } from "./request-head.js";
import { relayedResponseHead } from "./response-head.js";

/** What the relay answers an `Expect: 100-continue` with, once the body has somewhere to go (as node:http and nginx do). */
export const CONTINUE_HEAD = "HTTP/1.1 100 Continue\r\n\r\n";
/** The 101 handshake's own hop-by-hop headers, which pass with it. */
const UPGRADE_HEADERS = ["upgrade", "connection"];

/**
 * Whether the relay owes the client a `100 Continue` (the app never sees `expect`: it is
 * hop-by-hop here). Any other expectation than 100-continue was answered 417 before
 * (relay-server.ts); an HTTP/1.0 client cannot ask for one.
 */
export function expectsContinue(request: RequestHead): boolean {
  return request.versionMinor === 1 && request.joined("expect") !== undefined;
}

/** Only a 101 to the WebSocket asked for becomes a tunnel: what it switched to otherwise (for the 502's log line), undefined when it is that. */
export function unaskedSwitch(upgrade: "websocket" | "other" | undefined, head: ParsedHead): string | undefined {
  const switchedTo = headerValue(head.headers, "upgrade") ?? "";
  return upgrade === "websocket" && switchedTo.toLowerCase() === "websocket" ? undefined : switchedTo;
}

/** The 101 as the client gets it: its Upgrade and Connection pass, and the connection is the tunnel's after it. */
export function switchingProtocolsHead(status: number, message: string, fields: readonly string[]): Buffer {
  return relayedResponseHead(status, message, fields, { hasContentLength: true, hasDate: true }, "none", false, UPGRADE_HEADERS);
}
