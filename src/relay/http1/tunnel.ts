// A WebSocket after its 101: two sockets piped both ways, raw bytes, each side's end or error closing the other; counted for --idle-timeout when it is on.
import type { Socket } from "node:net";
import type { ProxyObserver } from "../../http/proxy-observer.js";
import { faultAt, faultsArmed } from "../fault-injection.js";

/**
 * Joins the client and upstream sockets. `clientRest` came from the client after its handshake
 * head, `upstreamRest` from the app after its 101; each goes first to the other side.
 * `onClosed` runs once, when the tunnel is gone (its concurrency slot is free then). A defect
 * in its callbacks closes this tunnel only, reported through `reportFault`. With `activity`
 * (only when --idle-timeout or --max-request-duration is on) the bytes each way are counted
 * for the deadlines' sweep. Returns what closes the tunnel, both sides at once.
 */
export function openTunnel(
  client: Socket,
  upstream: Socket,
  clientRest: Buffer,
  upstreamRest: Buffer,
  observer: ProxyObserver,
  onClosed: () => void,
  reportFault: (error: unknown) => void,
  activity?: { bodySent(bytes: number): void; bodyReceived(bytes: number): void },
): () => void {
  const contained = (handler: () => void) => () => {
    try {
      handler();
    } catch (error) {
      reportFault(error);
      client.destroy();
      upstream.destroy();
    }
  };
  observer.tunnelOpened();
  client.once(
    "close",
    contained(() => {
      upstream.destroy();
      observer.tunnelClosed();
      onClosed();
    }),
  );
  upstream.on("error", () => client.destroy());
  client.on("error", () => upstream.destroy());
  upstream.once("close", () => client.end());
  // The pipes below are node's own; the seam for a defect in the bytes' path is wired only when
  // a test arms one, so a tunnel pays no listener for it otherwise.
  if (faultsArmed()) {
    const seam = contained(() => faultAt("tunnel data"));
    client.on("data", seam);
    upstream.on("data", seam);
  }
  if (activity !== undefined) {
    client.on("data", (chunk: Buffer) => activity.bodyReceived(chunk.length));
    upstream.on("data", (chunk: Buffer) => activity.bodySent(chunk.length));
  }
  if (upstreamRest.length > 0) client.write(upstreamRest);
  if (clientRest.length > 0) upstream.write(clientRest);
  client.pipe(upstream);
  upstream.pipe(client);
  client.resume();
  upstream.resume();
  return () => {
    client.destroy();
    upstream.destroy();
  };
}
