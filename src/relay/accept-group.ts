// The relay's listener: one port, several listening sockets joined by SO_REUSEPORT, because libuv accepts one connection per socket each time the loop polls.
import { Server, connect, type AddressInfo, type Socket } from "node:net";
import type { ListenAddress } from "../config/listen-address.js";
import { listen, listenFailure } from "../http/listen.js";

/**
 * Listening sockets on the port. libuv (1.45 on, libuv#3696) accepts one connection per
 * listening socket each time the loop polls, and a loop busy with a thousand connections polls
 * about every 100 ms: with one socket, a storm of new connections was accepted ten a second, and
 * a probe on a new connection (the kubelet opens one per probe) waited behind it. While the
 * all-loads soak's clients connected, a new connection's first byte came up to 3.9-4.1 s late
 * with one socket; 0.9-1.4 s with 8, 0.5-0.7 s with 16, 0.3-0.6 s with 32 (bench/connection-storm.mjs).
 * The kernel spreads connections over the sockets by their addresses; each costs a descriptor.
 */
export const LISTENING_SOCKETS = 16;

/**
 * Node sets SO_REUSEPORT from 22.12 and 23.1 on (listen's `reusePort`); before, the option is
 * ignored and a second socket could not bind. The binary embeds a runtime that has it; the npm
 * package under an older node listens on one socket, as before.
 */
export function runtimeSetsReusePort(version = process.versions.node): boolean {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  return major > 23 || (major === 23 && minor >= 1) || (major === 22 && minor >= 12);
}

/** The sockets, each handing its connections to `onConnection`; closed together. */
export class AcceptGroup {
  readonly servers: readonly Server[];

  constructor(onConnection: (socket: Socket) => void, count = runtimeSetsReusePort() ? LISTENING_SOCKETS : 1) {
    this.servers = Array.from({ length: count }, () => new Server({ noDelay: true }, onConnection));
  }

  /** The first socket: the one a "listening" handler goes on. */
  get first(): Server {
    return this.servers[0] as Server;
  }

  /** Binds every socket to `address` (port 0 resolved by the first); rejects as listen() does. */
  async listen(address: ListenAddress): Promise<AddressInfo> {
    // With SO_REUSEPORT on every socket, a second process of the same user (a second
    // readiness-proxy on the same --listen) would join the port instead of failing; so the port
    // is asked first, and one that answers is refused with EADDRINUSE, as before. Anything else
    // that holds it (without SO_REUSEPORT, or another user's) fails the bind itself. Not a plain
    // socket listening for a moment to claim the port: a client that connected in that moment
    // was reset when it closed (the bench's probe, right after its wait for the port, once).
    if (address.port !== 0 && (await answers(address))) throw listenFailure(address, { code: "EADDRINUSE", message: "" });
    try {
      const { port } = await listen(this.first, address, "", { reusePort: true });
      for (const server of this.servers.slice(1)) await listen(server, { host: address.host, port }, "", { reusePort: true });
    } catch (error) {
      for (const server of this.servers) if (server.listening) server.close();
      throw error;
    }
    return this.first.address() as AddressInfo;
  }

  /** Stops accepting on every socket; `done` runs once each has closed with its connections. */
  close(done: () => void): void {
    let open = this.servers.length;
    for (const server of this.servers) server.close(() => --open === 0 && done());
  }
}

/** How long a connection to the port is waited for: loopback answers at once, or refuses. */
const ANSWER_WAIT_MS = 1_000;

/**
 * Whether something accepts a connection on the port already: at the address given, or at the
 * loopback for a wildcard one (every address: IPv4 and IPv6 alike on Linux's dual-stack ::).
 */
function answers(address: ListenAddress): Promise<boolean> {
  const wildcard = address.host === undefined || address.host === "0.0.0.0" || address.host === "::";
  const host = wildcard ? (address.host === "::" ? "::1" : "127.0.0.1") : address.host;
  return new Promise((resolve) => {
    const socket = connect({ host, port: address.port });
    const settle = (answered: boolean): void => {
      socket.destroy();
      resolve(answered);
    };
    socket.setTimeout(ANSWER_WAIT_MS, () => settle(false));
    socket.once("connect", () => settle(true));
    socket.once("error", () => settle(false));
  });
}
