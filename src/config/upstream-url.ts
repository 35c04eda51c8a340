// Parses --upstream once into where the relay and the probes connect (a host and port, or a unix socket's path), the authority and origin the app is told, and the path prefix kept in front of every request.

/** A TCP endpoint, parsed once: its host (an IPv6 address without brackets) and port, and the authority it is asked by. */
export interface TcpEndpoint {
  readonly kind: "tcp";
  readonly host: string;
  readonly port: number;
  /** `host[:port]` as a URL's host reads (no `:80`, IPv6 in brackets): the Host and `:authority` a probe sends. */
  readonly authority: string;
}

/** A unix socket's endpoint (`--upstream unix:<path>`): asked as `localhost`. */
export interface UnixEndpoint {
  readonly kind: "unix";
  /** The socket's absolute path. */
  readonly path: string;
  readonly authority: "localhost";
}

/** Where a connection to an app goes, and the authority it is asked by: the pools and probes read this, never a URL again. */
export type Endpoint = TcpEndpoint | UnixEndpoint;

/** --upstream, parsed: where to connect, and what is put before each request. */
export type Upstream = Endpoint & {
  /** `http://<authority>`: the origin the HTTP probes ask (`http://localhost` for a unix socket). */
  readonly origin: string;
  /** Path prefix without a trailing slash ("" for none), put before each request's path. */
  readonly pathPrefix: string;
  /** As given, for logs. */
  readonly url: string;
};

/** The endpoint of an http URL: its host unbracketed, its port (80 when none), and its URL host as the authority. */
export function tcpEndpointOf(url: URL): TcpEndpoint {
  return { kind: "tcp", host: url.hostname.replace(/^\[(.*)\]$/, "$1"), port: Number(url.port || 80), authority: url.host };
}

/** Parses an absolute http URL, or `unix:<path>` / `unix://<path>`; returns why it is refused as a string. */
export function parseUpstream(text: string): Upstream | string {
  if (text.startsWith("unix:")) {
    const path = text.startsWith("unix://") ? text.slice("unix://".length) : text.slice("unix:".length);
    if (!path.startsWith("/")) return "expected unix:<absolute path> or unix://<absolute path>";
    return { kind: "unix", path, authority: "localhost", origin: "http://localhost", pathPrefix: "", url: text };
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
  return { ...tcpEndpointOf(url), origin: url.origin, pathPrefix: url.pathname.replace(/\/+$/, ""), url: text };
}

/** The unix socket's path of an endpoint, or undefined for TCP: for the HTTP clients that take an origin and a socketPath. */
export function socketPathOf(endpoint: Endpoint): string | undefined {
  return endpoint.kind === "unix" ? endpoint.path : undefined;
}
