// Parses the URLs the proxy itself calls on loopback (--app-exit-notify, --metrics-merge; CONTRACT §17): absolute http:// URLs to 127.0.0.0/8, [::1] or localhost, or a usage error naming the input.
import { usageError } from "../errors.js";
import { isLoopbackHost } from "./listen-address.js";

/** The most `--app-exit-notify` URLs: each is a request at the app's exit, all at once. */
export const MAX_EXIT_NOTIFY_URLS = 8;

/** One absolute `http://` URL whose host is loopback (another container of the pod), as given. */
export function parseLoopbackUrl(input: string, text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw usageError(input, "expected an absolute http:// URL on loopback, like http://127.0.0.1:15020/quitquitquit", text);
  }
  if (url.protocol !== "http:" || url.username !== "" || url.password !== "") {
    throw usageError(input, "expected an absolute http:// URL on loopback, like http://127.0.0.1:15020/quitquitquit", text);
  }
  // URL keeps an IPv6 host in brackets: the loopback rule takes it bare.
  if (!isLoopbackHost(url.hostname.replace(/^\[(.*)\]$/, "$1"))) throw usageError(input, "expected a loopback host (127.0.0.0/8, [::1] or localhost)", text);
  return text;
}

/** `--app-exit-notify`'s values (flag or comma list), each checked, at most {@link MAX_EXIT_NOTIFY_URLS}. */
export function parseExitNotifyUrls(input: string, values: readonly string[]): string[] {
  if (values.length > MAX_EXIT_NOTIFY_URLS) throw usageError(input, `expected at most ${MAX_EXIT_NOTIFY_URLS} URLs`, `${values.length} URLs`);
  return values.map((value) => parseLoopbackUrl(input, value));
}
