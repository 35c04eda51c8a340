// One socket of the relay's listener: listened without a name lookup where the address needs none, and whether the port is held already.
import * as net from "node:net";
import type { AddressInfo, ListenOptions, Server } from "node:net";
import type { ListenAddress } from "../config/listen-address.js";

/** node:net's BoundSocket (Node 24's): bound in its constructor, no lookup, adopted by server.listen(). @types/node 20 does not name it. */
export interface BoundSocket {
  address(): AddressInfo;
  close(): void;
}

/** What a BoundSocket is made of: `host` a numeric IP (none: 0.0.0.0, or :: with `ipv6Only`). */
export type BoundSocketClass = new (options: { host?: string; port?: number; reusePort?: boolean; ipv6Only?: boolean }) => BoundSocket;

/** The runtime's BoundSocket, undefined on one without it (Node 20, the npm package's floor). */
export function runtimeBoundSocket(): BoundSocketClass | undefined {
  return (net as unknown as { BoundSocket?: BoundSocketClass }).BoundSocket;
}

export interface SocketOptions {
  /** SO_REUSEPORT: the socket joins others on the port (accept-group.ts). */
  readonly reusePort: boolean;
  /** undefined: every host through listen()'s own path. */
  readonly boundSocket: BoundSocketClass | undefined;
}

/**
 * Listens `server` on `address`. listen() with a host looks it up even when it is an IP
 * (node:dns, then isIPv6() of the answer, whose first call compiles Node's IPv6 regular
 * expression: 3 ms of the start, measured alone), so a numeric host is bound by a BoundSocket
 * (isIPv4() only, for an IPv4 one) and adopted; no host is listen()'s own `::`, else `0.0.0.0`,
 * which looks nothing up either; a name goes through listen()'s lookup. Resolves with the address
 * bound, or undefined when the server was closed before it listened; rejects with node's error.
 */
export function listenOn(server: Server, address: ListenAddress, { reusePort, boundSocket }: SocketOptions): Promise<AddressInfo | undefined> {
  return new Promise((resolve, reject) => {
    const off = () => {
      server.off("listening", onListening).off("error", onError).off("close", onClose);
    };
    const onListening = () => {
      off();
      resolve((server.address() as AddressInfo | null) ?? undefined);
    };
    const onError = (error: Error) => {
      off();
      reject(error);
    };
    const onClose = () => {
      off();
      resolve(undefined);
    };
    server.on("listening", onListening).on("error", onError).on("close", onClose);
    try {
      const { host, port } = address;
      if (host !== undefined && boundSocket !== undefined && net.isIP(host) !== 0) adopt(server, new boundSocket({ host, port, reusePort }));
      else server.listen({ host, port, reusePort } as ListenOptions);
    } catch (error) {
      onError(error as Error);
    }
  });
}

/** The server takes the socket over; one it could not take is closed, not leaked. */
function adopt(server: Server, socket: BoundSocket): void {
  try {
    server.listen(socket);
  } catch (error) {
    socket.close();
    throw error;
  }
}

/**
 * Whether something holds the port already. With SO_REUSEPORT on every socket of the group, a
 * second process of the same user (a second readiness-proxy on the same --listen) would join the
 * port instead of failing, so the port is asked first. With a BoundSocket the kernel is asked:
 * a bind without SO_REUSEPORT, never listened and closed at once, fails with EADDRINUSE while
 * anything listens there (every address: 0.0.0.0 and an IPv6-only ::, which between them meet
 * any listener on the port); a socket that only binds answers no client (a SYN to it is refused
 * as to a free port), so no client is ever reset by it. Else (a name, or no BoundSocket) a
 * connection is tried. Not a plain socket listening for a moment to claim the port: a client that
 * connected in that moment was reset when it closed (the bench's probe, right after its wait for
 * the port, once).
 */
export async function portHeld(address: ListenAddress, boundSocket: BoundSocketClass | undefined): Promise<boolean> {
  const { host, port } = address;
  if (boundSocket !== undefined && host === undefined) return refusesBind(boundSocket, { port }) || refusesBind(boundSocket, { port, ipv6Only: true });
  if (boundSocket !== undefined && host !== undefined && net.isIP(host) !== 0) return refusesBind(boundSocket, { host, port });
  return answers(address);
}

/** EADDRINUSE: held. Any other failure (no IPv6 on the host, a port below 1024) is left to the listen itself to report. */
function refusesBind(boundSocket: BoundSocketClass, options: { host?: string; port: number; ipv6Only?: boolean }): boolean {
  try {
    new boundSocket(options).close();
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EADDRINUSE";
  }
}

/** How long a connection to the port is waited for: loopback answers at once, or refuses. */
const ANSWER_WAIT_MS = 1_000;

/** Whether something accepts a connection on the port: at the address given, or at the loopback for a wildcard one. */
function answers(address: ListenAddress): Promise<boolean> {
  const wildcard = address.host === undefined || address.host === "0.0.0.0" || address.host === "::";
  const host = wildcard ? (address.host === "::" ? "::1" : "127.0.0.1") : address.host;
  return new Promise((resolve) => {
    const socket = net.connect({ host, port: address.port });
    const settle = (answered: boolean): void => {
      socket.destroy();
      resolve(answered);
    };
    socket.setTimeout(ANSWER_WAIT_MS, () => settle(false));
    socket.once("connect", () => settle(true));
    socket.once("error", () => settle(false));
  });
}
