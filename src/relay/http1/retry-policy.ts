// When an HTTP/1.1 request may go to the app a second time: the app's idle close racing our reuse of its connection costs a resend, never a 502, for a request that can be sent again.
import type { RequestBodyFraming } from "./forwarded-request-head.js";

/** What a reused keep-alive connection the app closed just as we sent fails with. */
const STALE_SOCKET_CODES = new Set(["ECONNRESET", "EPIPE"]);
const IDEMPOTENT_METHODS = new Set(["GET", "HEAD", "OPTIONS", "DELETE", "PUT", "TRACE"]);

/**
 * Idempotent, without a body, not an upgrade: safe to send again, so it may also go on a pooled
 * connection of any age (the others get one young enough not to race the app's idle close).
 */
export function canBeSentAgain(method: string, framing: RequestBodyFraming, upgrade: boolean): boolean {
  return framing === "none" && !upgrade && IDEMPOTENT_METHODS.has(method);
}

/** The failure is the app's close of a reused connection under us: reset, broken pipe, or the parser's error on what the close cut. */
export function closedUnderUs(code: string): boolean {
  return STALE_SOCKET_CODES.has(code) || code.startsWith("HPE_");
}
