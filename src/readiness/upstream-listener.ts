// The entrypoint form's implicit listener check (CONTRACT §2, §8): the upstream's own port, when the upstream is on loopback, is required like a --readiness-required-listener port.
import type { UpstreamListenerMode } from "../config/config.js";
import type { Upstream } from "../config/upstream-url.js";


/** Hosts whose listening socket lives in our own network namespace: the only ones the socket tables can see. */
function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * The ports `/readyz` requires: the operator's, plus, in the entrypoint form with `auto`, the
 * upstream's own port when its host is loopback (the app we started listens there; until it
 * does every proxied request would be 502). Ascending and unique, so a port the operator
 * already requires is not added twice. It joins the same scan: no extra cost.
 */
export function requiredListenerPorts(options: {
  readonly requiredPorts: readonly number[];
  readonly upstream: Upstream;
  readonly mode: UpstreamListenerMode;
  readonly entrypointForm: boolean;
}): readonly number[] {
  const { requiredPorts, upstream, mode, entrypointForm } = options;
  if (mode === "off" || !entrypointForm) return requiredPorts;
  const url = new URL(upstream.origin);
  if (!isLoopbackHost(url.hostname)) return requiredPorts;
  const port = Number(url.port || 80);
  return requiredPorts.includes(port) ? requiredPorts : [...requiredPorts, port].sort((a, b) => a - b);
}
