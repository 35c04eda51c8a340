// --app-exit-notify (CONTRACT §17): when the app exits on its own, one empty POST to each URL (a Job's mesh sidecars), all at once, each within 2 s, logged in one line.
import { request } from "node:http";
import type { Logger } from "pino";
import { errorCode } from "../errors.js";

/** Each URL's answer must come within this; a sidecar that hangs never holds the exit longer. */
export const NOTIFY_TIMEOUT_MS = 2_000;

/** One URL's outcome as the log line gives it: the status, or `error` and why. */
export type NotifyOutcome = { readonly url: string; readonly status: number } | { readonly url: string; readonly status: "error"; readonly reason: string };

/** POSTs to every URL at once; resolves when each has answered or failed (never rejects), after logging `app exit notified`. */
export async function notifyAppExit(urls: readonly string[], log: Logger, timeoutMs = NOTIFY_TIMEOUT_MS): Promise<readonly NotifyOutcome[]> {
  const notified = await Promise.all(urls.map((url) => post(url, timeoutMs)));
  log.info({ notified }, "app exit notified");
  return notified;
}

function post(url: string, timeoutMs: number): Promise<NotifyOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: NotifyOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const outgoing = request(url, { method: "POST", agent: false, headers: { "content-length": "0" } }, (response) => {
      settle({ url, status: response.statusCode ?? 0 });
      // The body means nothing here: read and dropped, the socket closed after it (no agent).
      response.resume();
    });
    // One timer for the whole exchange, connect included: a SYN nobody answers counts too.
    const timer = setTimeout(() => {
      settle({ url, status: "error", reason: `timeout after ${timeoutMs / 1000}s` });
      outgoing.destroy();
    }, timeoutMs);
    outgoing.on("error", (error) => settle({ url, status: "error", reason: describeFailure(error) }));
    outgoing.end();
  });
}

/** `connection refused`, not `connect ECONNREFUSED 127.0.0.1:15020`: the URL is on the same entry. */
function describeFailure(error: Error): string {
  switch (errorCode(error)) {
    case "ECONNREFUSED":
      return "connection refused";
    case "ECONNRESET":
      return "connection reset";
    default:
      return error.message;
  }
}
