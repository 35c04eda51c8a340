// The entrypoint form's implicit listener check (CONTRACT §2, §8): the upstream's own port, when the upstream is on loopback, is required like a --readiness-required-listener port, at an address the proxy reaches.
import type { UpstreamListenerMode } from "../config/config.js";
import type { Upstream } from "../config/upstream-url.js";
import { defaultListenerName, type RequiredListener } from "../config/listener-specs.js";

/** The upstream's own listener as the proxy connects to it: the port, and the addresses it tries. */
export interface UpstreamListener {
  readonly port: number;
  /** `127.0.0.1`, `::1`, or both for `localhost` (the connect tries each address it resolves to). */
  readonly hosts: readonly string[];
}

/** Where a loopback upstream host (as parsed: IPv6 without brackets) connects to, or undefined when its socket lives elsewhere (the socket tables cannot see it). */
function loopbackHosts(parsedHost: string): readonly string[] | undefined {
  const host = parsedHost.toLowerCase();
  if (host === "localhost") return ["127.0.0.1", "::1"];
  if (host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)) return [host];
  return undefined;
}

/**
 * The upstream's listener the entrypoint form with `auto` requires (the app we started listens
 * there; until it does every proxied request would be 502), or undefined: the sidecar form,
 * `off`, or a host that is not loopback.
 */
export function upstreamListener(options: { readonly upstream: Upstream; readonly mode: UpstreamListenerMode; readonly entrypointForm: boolean }): UpstreamListener | undefined {
  const { upstream, mode, entrypointForm } = options;
  // A unix socket upstream is required as a unix listener instead (see upstreamUnixListener).
  if (mode === "off" || !entrypointForm || upstream.kind === "unix") return undefined;
  const hosts = loopbackHosts(upstream.host);
  return hosts && { port: upstream.port, hosts };
}

/**
 * The ports `/readyz` requires: the operator's, plus the upstream's own (see {@link upstreamListener}).
 * Ascending and unique, so a port the operator already requires is not added twice. It joins the
 * same scan: no extra cost.
 */
export function requiredListenerPorts(options: {
  readonly requiredPorts: readonly number[];
  readonly upstream: Upstream;
  readonly mode: UpstreamListenerMode;
  readonly entrypointForm: boolean;
}): readonly number[] {
  const { requiredPorts } = options;
  const port = upstreamListener(options)?.port;
  if (port === undefined || requiredPorts.includes(port)) return requiredPorts;
  return [...requiredPorts, port].sort((a, b) => a - b);
}

/**
 * Whether a LISTEN socket at `address` takes the proxy's connections to one of `hosts`: the
 * address itself, the wildcard of its family, or for an IPv4 host the dual-stack `::` (unless the
 * app set IPV6_V6ONLY, which the tables do not show) and the IPv4-mapped form of the host.
 */
export function reachesUpstream(listener: UpstreamListener, address: string): boolean {
  return listener.hosts.some((host) =>
    host.includes(":") ? address === host || address === "::" : address === host || address === "0.0.0.0" || address === "::" || address === `::ffff:${host}`,
  );
}

/**
 * The entrypoint form's check of an app behind `--upstream unix:<path>` with `auto`: the socket
 * listening at that path (`listener-unix-<basename>`), or undefined (TCP upstream, sidecar form, `off`).
 */
export function upstreamUnixListener(options: { readonly upstream: Upstream; readonly mode: UpstreamListenerMode; readonly entrypointForm: boolean }): RequiredListener | undefined {
  const { upstream, mode, entrypointForm } = options;
  if (mode === "off" || !entrypointForm || upstream.kind !== "unix") return undefined;
  const { path } = upstream;
  return { kind: "unix", key: `unix:${path}`, path, name: defaultListenerName(`unix:${path}`) };
}
