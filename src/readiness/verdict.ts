// Turns one listener scan and the required listeners (TCP ports, UDP ports, unix paths) into one of the three readiness states.
import { listenerKind, type ListenerKey, type RequiredListener } from "../config/listener-specs.js";
import { formatSocket } from "../procfs/kernel-address.js";
import { KIND_TABLES, type ListenerScan, type SocketTable } from "../procfs/listener-scan.js";
import { reachesUpstream, type UpstreamListener } from "./upstream-listener.js";

/** The outcome of one readiness check. */
export type Verdict =
  | { readonly state: "present"; readonly ready: true; readonly ports: readonly ListenerKey[] }
  | {
      readonly state: "missing";
      readonly ready: false;
      /** Every required listener as given: TCP ports ascending, then `udp:<port>`, then `unix:<path>`. */
      readonly ports: readonly ListenerKey[];
      /** Required listeners seen in no table of their kind (or, the upstream's port, at no address the proxy reaches), in that order. */
      readonly missing: readonly ListenerKey[];
      /** Where the upstream's port does listen, out of the proxy's reach (`[::1]:8000`); only when there is such a socket. */
      readonly unreachable?: readonly string[];
    }
  | {
      /** Fail open: some port was not seen, but a table could not be read, so nothing is reported missing. */
      readonly state: "not enforced";
      readonly ready: true;
      readonly ports: readonly ListenerKey[];
      readonly unreadableTables: readonly SocketTable[];
    };

/**
 * Decides readiness. `requiredPorts` must be ascending and unique (the CLI guarantees it), and
 * `others` (UDP and unix listeners) in check order. `present` needs every listener seen (the
 * upstream's port, when given, at an address the proxy reaches); a listener not seen whose kind
 * has an unreadable table is not enforced (we cannot tell whether the table hid it); only a
 * listener not seen in fully read tables of its kind is `missing`.
 */
export function decideVerdict(requiredPorts: readonly number[], scan: ListenerScan, upstream?: UpstreamListener, others: readonly RequiredListener[] = []): Verdict {
  const upstreamAddresses = upstream && (scan.listenAddresses?.get(upstream.port) ?? []);
  const countsTcp = (port: number) =>
    port === upstream?.port ? upstreamAddresses!.some((address) => reachesUpstream(upstream, address)) : scan.listeningPorts.has(port);
  const counts = (listener: RequiredListener) =>
    listener.kind === "udp" ? scan.boundUdpPorts?.has(listener.port) === true : listener.kind === "unix" ? scan.listeningUnixPaths?.has(listener.path) === true : countsTcp(listener.port);
  const ports: ListenerKey[] = [...requiredPorts, ...others.map((listener) => listener.key)];
  const notSeen: ListenerKey[] = [...requiredPorts.filter((port) => !countsTcp(port)), ...others.filter((listener) => !counts(listener)).map((listener) => listener.key)];
  if (notSeen.length === 0) return { state: "present", ready: true, ports };
  const unreadable = new Set(scan.unreadableTables.map((entry) => entry.table));
  const enforced = (key: ListenerKey) => !KIND_TABLES[listenerKind(key)].some((table) => unreadable.has(table));
  const missing = notSeen.filter(enforced);
  if (missing.length === 0) {
    return { state: "not enforced", ready: true, ports, unreadableTables: scan.unreadableTables.map((entry) => entry.table) };
  }
  // Once each: SO_REUSEPORT workers (several sockets on one address) are one place to name.
  const unreachable = upstream && missing.includes(upstream.port) ? [...new Set(upstreamAddresses!.map((address) => formatSocket(address, upstream.port)))] : [];
  return { state: "missing", ready: false, ports, missing, ...(unreachable.length > 0 && { unreachable }) };
}
