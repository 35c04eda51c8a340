// Puts a codec connection on a `net` socket: reads go in, drains and the close are told; the one place either side's wiring lives.
import type { Socket } from "node:net";
import { H2Connection, type H2ConnectionHandler, type H2ConnectionOptions } from "./h2-connection.js";

/** How long a socket we ended stays for the peer's own close. */
const LINGER_MS = 1000;

/** Where a socket keeps its connection, for the listeners below (one set of functions for every socket). */
const CONNECTION = Symbol("h2 connection");
type BoundSocket = Socket & { [CONNECTION]: H2Connection };

/** The connection on `socket`; `onSocketError` hears the socket's error (its close follows, which resets every stream). */
export function connectionOnSocket(socket: Socket, handler: H2ConnectionHandler, options: H2ConnectionOptions, onSocketError: (error: Error) => void): H2Connection {
  const connection = new H2Connection(socket, handler, options);
  // The same functions on every socket, each finding its connection on the socket: a closure per
  // event per connection (and its context) was a tenth of an idle connection's heap.
  (socket as BoundSocket)[CONNECTION] = connection;
  socket.on("data", receive);
  socket.on("drain", transportDrained);
  socket.on("error", onSocketError);
  socket.on("close", transportClosed);
  // After our FIN (a GOAWAY, or the last stream after one), a peer that never closes its side is not waited for.
  // `on`, not `once` (a socket finishes once): `once` wraps its listener in a closure per connection.
  socket.on("finish", lingerThenDestroy);
  return connection;
}

function receive(this: BoundSocket, chunk: Buffer): void {
  this[CONNECTION].receive(chunk);
}

function transportDrained(this: BoundSocket): void {
  this[CONNECTION].transportDrained();
}

function transportClosed(this: BoundSocket): void {
  this[CONNECTION].transportClosed();
}

function lingerThenDestroy(this: Socket): void {
  setTimeout(() => this.destroy(), LINGER_MS).unref();
}
