// Puts a codec connection on a `net` socket: reads go in, drains and the close are told; the one place either side's wiring lives.
import type { Socket } from "node:net";
import { H2Connection, type H2ConnectionHandler, type H2ConnectionOptions } from "./h2-connection.js";

/** How long a socket we ended stays for the peer's own close. */
const LINGER_MS = 1000;

/** The connection on `socket`; `onSocketError` hears the socket's error (its close follows, which resets every stream). */
export function connectionOnSocket(socket: Socket, handler: H2ConnectionHandler, options: H2ConnectionOptions, onSocketError: (error: Error) => void): H2Connection {
  const connection = new H2Connection(socket, handler, options);
  socket.on("data", (chunk: Buffer) => connection.receive(chunk));
  socket.on("drain", () => connection.transportDrained());
  socket.on("error", onSocketError);
  socket.on("close", () => connection.transportClosed());
  // After our FIN (a GOAWAY, or the last stream after one), a peer that never closes its side is not waited for.
  // One function for every socket and `on`, not `once` (a socket finishes once): `once` wraps its
  // listener in a closure per connection, and an idle connection's heap is mostly such objects.
  socket.on("finish", lingerThenDestroy);
  return connection;
}

function lingerThenDestroy(this: Socket): void {
  setTimeout(() => this.destroy(), LINGER_MS).unref();
}
