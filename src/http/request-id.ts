// Request ids for proxy-made errors: the client's own X-Request-Id when it is sane, else a new UUID.
import type { RequestView } from "./response-writer.js";

const SANE_REQUEST_ID = /^[\w.:-]{1,128}$/;

/** The id shown on the error page and body, in `X-Request-Id`, and in the log line. */
export function requestIdOf(request: RequestView): string {
  const given = request.header("x-request-id");
  // The global Web Crypto, not node:crypto: importing that module costs ~10 ms of every start,
  // and the global loads it on first use (the first proxy-made error).
  return typeof given === "string" && SANE_REQUEST_ID.test(given) ? given : globalThis.crypto.randomUUID();
}
