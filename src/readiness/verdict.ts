// Turns one listener scan and the required ports into one of the three readiness states.
import { formatSocket } from "../procfs/kernel-address.js";
import type { ListenerScan, SocketTable } from "../procfs/listener-scan.js";
import { reachesUpstream, type UpstreamListener } from "./upstream-listener.js";

/** The outcome of one readiness check. */
export type Verdict =
  | { readonly state: "present"; readonly ready: true; readonly ports: readonly number[] }
  | {
      readonly state: "missing";
      readonly ready: false;
      readonly ports: readonly number[];
      /** Required ports seen in no table (or, the upstream's, at no address the proxy reaches), ascending. */
      readonly missing: readonly number[];
      /** Where the upstream's port does listen, out of the proxy's reach (`[::1]:8000`); only when there is such a socket. */
      readonly unreachable?: readonly string[];
    }
  | {
      /** Fail open: some port was not seen, but a table could not be read, so nothing is reported missing. */
      readonly state: "not enforced";
      readonly ready: true;
      readonly ports: readonly number[];
      readonly unreadableTables: readonly SocketTable[];
    };

/**
 * Decides readiness. `requiredPorts` must be ascending and unique (the CLI guarantees it).
 * `present` needs every port seen (the upstream's port, when given, at an address the proxy
 * reaches); otherwise an unreadable table means `not enforced` (we cannot tell whether it hid the
 * port), and only with every table read is it `missing`.
 */
export function decideVerdict(requiredPorts: readonly number[], scan: ListenerScan, upstream?: UpstreamListener): Verdict {
  const upstreamAddresses = upstream && (scan.listenAddresses?.get(upstream.port) ?? []);
  const counts = (port: number) =>
    port === upstream?.port ? upstreamAddresses!.some((address) => reachesUpstream(upstream, address)) : scan.listeningPorts.has(port);
  const missing = requiredPorts.filter((port) => !counts(port));
  if (missing.length === 0) return { state: "present", ready: true, ports: requiredPorts };
  if (scan.unreadableTables.length > 0) {
    return {
      state: "not enforced",
      ready: true,
      ports: requiredPorts,
      unreadableTables: scan.unreadableTables.map((unreadable) => unreadable.table),
    };
  }
  // Once each: SO_REUSEPORT workers (several sockets on one address) are one place to name.
  const unreachable = upstream && missing.includes(upstream.port) ? [...new Set(upstreamAddresses!.map((address) => formatSocket(address, upstream.port)))] : [];
  return { state: "missing", ready: false, ports: requiredPorts, missing, ...(unreachable.length > 0 && { unreachable }) };
}
