// Parses --upstream into where the relay connects (host and port, or a unix socket's path), the origin the health probe asks, and the path prefix kept in front of every request.

/** Where every connection to the app goes: parsed once here, read by the pools and probes alone. */
export type ConnectTarget = { readonly host: string; readonly port: number } | { readonly path: string };

export interface Upstream {
  /** `http://host:port` (`http://localhost` for a unix socket): the probes' Host and `:authority`. */
  readonly origin: string;
  /** Where the pools and probes connect. */
  readonly connectTarget: ConnectTarget;
  /** Path prefix without a trailing slash ("" for none), put before each request's path. */
  readonly pathPrefix: string;
  /** As given, for logs. */
  readonly url: string;
}

/** Parses an absolute http URL, or `unix:<path>` / `unix://<path>`; returns why it is refused as a string. */
export function parseUpstream(text: string): Upstream | string {
  if (text.startsWith("unix:")) {
    const path = text.startsWith("unix://") ? text.slice("unix://".length) : text.slice("unix:".length);
    if (!path.startsWith("/")) return "expected unix:<absolute path> or unix://<absolute path>";
    return { origin: "http://localhost", connectTarget: { path }, pathPrefix: "", url: text };
  }
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
  const connectTarget = { host: url.hostname.replace(/^\[(.*)\]$/, "$1"), port: Number(url.port || 80) };
  return { origin: url.origin, connectTarget, pathPrefix: url.pathname.replace(/\/+$/, ""), url: text };
}
