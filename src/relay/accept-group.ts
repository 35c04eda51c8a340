// The relay's listener: one port, several listening sockets joined by SO_REUSEPORT, because libuv accepts one connection per socket each time the loop polls.
import { Server, type AddressInfo, type Socket } from "node:net";
import type { ListenAddress } from "../config/listen-address.js";
import { listenFailure } from "../http/listen.js";
import { listenOn, portHeld, runtimeBoundSocket, type BoundSocketClass, type SocketOptions } from "./listen-socket.js";

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

export interface AcceptGroupOptions {
  /** Sockets in the group: LISTENING_SOCKETS where the runtime sets SO_REUSEPORT, else 1; a private loopback relay (the warm-up's) needs 1. */
  readonly count?: number;
  /** A socket after the first could not listen (descriptors ran out, say): the group accepts on the `listening` that do. */
  readonly onFewerSockets?: (error: unknown, listening: number, wanted: number) => void;
  /** node:net's BoundSocket; null as on a runtime without one (the tests of that path). */
  readonly boundSocket?: BoundSocketClass | null;
  /** How one socket listens (listen-socket.ts); the tests hold some back. */
  readonly listenSocket?: (server: Server, address: ListenAddress, options: SocketOptions) => Promise<AddressInfo | undefined>;
}

/**
 * The sockets, each handing its connections to `onConnection`; closed together. The first listens
 * before listen() resolves, the others after it, so a start answers its first request (and logs
 * `listening`) one listen in, not sixteen.
 */
export class AcceptGroup {
  readonly servers: readonly Server[];
  readonly #options: SocketOptions;
  readonly #listenSocket: NonNullable<AcceptGroupOptions["listenSocket"]>;
  readonly #onFewerSockets: NonNullable<AcceptGroupOptions["onFewerSockets"]>;
  #closing = false;
  #rest: Promise<number> = Promise.resolve(0);

  constructor(onConnection: (socket: Socket) => void, { count = runtimeSetsReusePort() ? LISTENING_SOCKETS : 1, onFewerSockets = () => {}, boundSocket, listenSocket = listenOn }: AcceptGroupOptions = {}) {
    this.servers = Array.from({ length: count }, () => new Server({ noDelay: true }, onConnection));
    // One socket is bound alone: a second process on the port then fails its own bind, and nothing need be asked first.
    this.#options = { reusePort: count > 1, boundSocket: boundSocket === null ? undefined : (boundSocket ?? runtimeBoundSocket()) };
    this.#listenSocket = listenSocket;
    this.#onFewerSockets = onFewerSockets;
    // One that comes to listen after close() (its listen was under way) stops at once: none is left open.
    for (const server of this.servers) server.on("listening", () => this.#closing && server.close());
  }

  /** The first socket: the one a "listening" handler goes on. */
  get first(): Server {
    return this.servers[0] as Server;
  }

  /** close() was called: nothing listens from then on. */
  get closing(): boolean {
    return this.#closing;
  }

  /**
   * Binds the first socket to `address` (port 0 resolved) and resolves with its address; the
   * others then join the same port (`rest`). Rejects as listen() does, with nothing left bound.
   * A group closed before its first socket listened never resolves: its close is the process's end.
   */
  async listen(address: ListenAddress): Promise<AddressInfo> {
    const options = this.#options;
    if (options.reusePort && address.port !== 0 && (await portHeld(address, options.boundSocket))) throw listenFailure(address, { code: "EADDRINUSE", message: "" });
    let bound: AddressInfo | undefined;
    try {
      bound = this.#closing ? undefined : await this.#listenSocket(this.first, address, options);
    } catch (error) {
      throw listenFailure(address, error as NodeJS.ErrnoException);
    }
    if (bound === undefined || this.#closing) return new Promise<never>(() => {});
    this.#rest = this.servers.length > 1 ? this.#openRest({ host: address.host, port: bound.port }) : Promise.resolve(1);
    return bound;
  }

  /**
   * How many sockets listen once the others have been opened (or given up: at the first that
   * fails, told to onFewerSockets, or at close()); 0 until the first listens.
   */
  get rest(): Promise<number> {
    return this.#rest;
  }

  /** After the loop has polled once (a client already waiting on the first socket is taken first), each in turn. */
  async #openRest(address: ListenAddress): Promise<number> {
    await new Promise((resolve) => setImmediate(resolve));
    let listening = 1;
    for (const server of this.servers.slice(1)) {
      if (this.#closing) break;
      try {
        const bound = await this.#listenSocket(server, address, this.#options);
        if (bound === undefined || this.#closing) break;
        listening++;
      } catch (error) {
        // Not a failure of the listener: it accepts, on fewer sockets (fairness under a storm of connections, not service).
        this.#onFewerSockets(error, listening, this.servers.length);
        break;
      }
    }
    return listening;
  }

  /** Stops accepting on every socket, those still opening too; `done` runs once each has closed with its connections. */
  close(done: () => void): void {
    this.#closing = true;
    let open = this.servers.length;
    const closed = () => --open === 0 && void this.#rest.then(done, done);
    for (const server of this.servers) server.close(closed);
  }
}
