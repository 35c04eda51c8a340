// --error-pages-intercept-upstream: whether the app's own 5xx is answered with the branded page instead, and the line that says so; one rule for every exchange, whatever the protocols on its two sides.
import { withoutQuery } from "../access-log/access-log.js";
import { wantsHtml } from "../http/error-response.js";
import type { RequestView } from "../http/response-writer.js";
import type { RelayContext } from "./relay-context.js";

/**
 * True when the app's `status` is to be replaced by the page: a 5xx, the flag on, and a browser
 * navigation (Accept lists text/html; API clients keep the app's body). The exchange then sends
 * the page at once and never reads the app's body, as nginx's `proxy_intercept_errors` does: an
 * app failing with an endless body would otherwise leave the browser with nothing.
 */
export function interceptsUpstreamError(context: RelayContext, request: RequestView, status: number): boolean {
  return status >= 500 && context.interceptUpstreamErrors && wantsHtml(request.header("accept"));
}

/** The page shows the request id; this line is where the operator finds it. */
export function logInterceptedError(context: RelayContext, request: RequestView, requestId: string, status: number): void {
  context.errorLog.warn("upstream error replaced by the error page", { requestId, status, method: request.method, url: withoutQuery(request.url) });
}
