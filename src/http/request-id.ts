// Request ids for proxy-made errors: the client's own X-Request-Id when it is sane, else a new UUID.
import { randomUuid } from "./random-uuid.js";
import type { RequestView } from "./response-writer.js";

const SANE_REQUEST_ID = /^[\w.:-]{1,128}$/;

/** The id shown on the error page and body, in `X-Request-Id`, and in the log line. */
export function requestIdOf(request: RequestView): string {
  const given = request.header("x-request-id");
  return typeof given === "string" && SANE_REQUEST_ID.test(given) ? given : randomUuid();
}
