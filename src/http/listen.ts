// Opens a server on a [host]:port, turning the usual failures into one line for a person (exit 1).
import type { AddressInfo, Server } from "node:net";
import { formatListenAddress, type ListenAddress } from "../config/listen-address.js";
import { ERROR_CODES, EXIT_CODES, ReadinessProxyError } from "../errors.js";
import { listenOn, runtimeBoundSocket } from "../relay/listen-socket.js";

/**
 * Resolves with the address bound (port 0 resolved); rejects with `cannot listen on <where>: <why>`.
 * One socket, listened as each of the relay's is (relay/listen-socket.ts: no name lookup for a
 * numeric host); a server closed before it listened never resolves, as listen()'s callback never comes.
 */
export async function listen(server: Server, address: ListenAddress, label = ""): Promise<AddressInfo> {
  let bound: AddressInfo | undefined;
  try {
    bound = await listenOn(server, address, { reusePort: false, boundSocket: runtimeBoundSocket() });
  } catch (error) {
    throw listenFailure(address, error as NodeJS.ErrnoException, label);
  }
  return bound ?? new Promise<never>(() => {});
}

/** `cannot listen on <where>: <why>`, exit 1: the one line a failed listen gives. */
export function listenFailure(address: ListenAddress, error: Pick<NodeJS.ErrnoException, "code" | "message">, label = ""): ReadinessProxyError {
  const where = `${formatListenAddress(address)}${label}`;
  const why =
    error.code === "EADDRINUSE"
      ? "address already in use"
      : error.code === "EACCES"
        ? "permission denied"
        : error.code === "EADDRNOTAVAIL"
          ? "address not available on this host"
          : error.message;
  return new ReadinessProxyError(ERROR_CODES.listen, `cannot listen on ${where}: ${why}`, EXIT_CODES.runtime);
}
