// A WebSocket after its 101: two sockets piped both ways, raw bytes, each side's end or error closing the other.
import type { Socket } from "node:net";
import type { ProxyObserver } from "../http/proxy-observer.js";

/**
 * Joins the client and upstream sockets. `clientRest` came from the client after its handshake
 * head, `upstreamRest` from the app after its 101; each goes first to the other side.
 * `onClosed` runs once, when the tunnel is gone (its concurrency slot is free then).
 */
export function openTunnel(client: Socket, upstream: Socket, clientRest: Buffer, upstreamRest: Buffer, observer: ProxyObserver, onClosed: () => void): void {
  observer.tunnelOpened();
  client.once("close", () => {
    observer.tunnelClosed();
    upstream.destroy();
    onClosed();
  });
  upstream.on("error", () => client.destroy());
  client.on("error", () => upstream.destroy());
  upstream.once("close", () => client.end());
  if (upstreamRest.length > 0) client.write(upstreamRest);
  if (clientRest.length > 0) upstream.write(clientRest);
  client.pipe(upstream);
  upstream.pipe(client);
  client.resume();
  upstream.resume();
}
