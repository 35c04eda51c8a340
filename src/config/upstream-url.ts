// Parses --upstream into the origin the relay connects to (and the health probe asks) and the path prefix kept in front of every request.

export interface Upstream {
  /** `http://host:port`, what the connection pool is made for. */
  readonly origin: string;
  /** Path prefix without a trailing slash ("" for none), put before each request's path. */
  readonly pathPrefix: string;
  /** As given, for logs. */
  readonly url: string;
}

/** Parses an absolute http URL; returns why it is refused as a string. */
export function parseUpstream(text: string): Upstream | string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "expected an absolute http:// URL";
  }
  if (url.protocol === "https:") return "expected an absolute http:// URL (https upstreams are not supported)";
  if (url.protocol !== "http:" || url.hostname === "") return "expected an absolute http:// URL";
  if (url.username !== "" || url.password !== "") return "expected a URL without credentials";
  if (url.search !== "" || url.hash !== "") return "expected a URL without a query or fragment";
  return { origin: url.origin, pathPrefix: url.pathname.replace(/\/+$/, ""), url: text };
}
