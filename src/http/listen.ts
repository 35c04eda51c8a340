// Opens a server on a [host]:port, turning the usual failures into one line for a person (exit 1).
import type { AddressInfo, ListenOptions, Server } from "node:net";
import { formatListenAddress, type ListenAddress } from "../config/listen-address.js";
import { ERROR_CODES, EXIT_CODES, ReadinessProxyError } from "../errors.js";

/** Node's listen options, with the one this runtime has and @types/node 20 does not name yet. */
type SocketOptions = ListenOptions & { reusePort?: boolean };

/**
 * Resolves with the address bound (port 0 resolved); rejects with `cannot listen on <where>: <why>`.
 * `reusePort` sets SO_REUSEPORT, for a socket that joins others on the same port (accept-group.ts).
 */
export function listen(server: Server, address: ListenAddress, label = "", { reusePort = false } = {}): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => reject(listenFailure(address, error, label));
    server.once("error", onError);
    const options: SocketOptions = { host: address.host, port: address.port, reusePort };
    server.listen(options, () => {
      server.off("error", onError);
      resolve(server.address() as AddressInfo);
    });
  });
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
