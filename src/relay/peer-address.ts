// A client connection's peer address, read once from its socket's handle: without the object net.Socket would cache for it, and one string for a run of connections from the same address.
import type { Socket } from "node:net";

/** What the handle's getpeername() fills in; only the address is kept. */
const peer: { address?: string } = {};
/** The address the last connection came from: a load balancer's or a kubelet's connections share one. */
let lastAddress: string | undefined;

/**
 * `socket.remoteAddress`, as the relay keeps it per connection. net.Socket's own getter caches
 * `{ address, family, port }` on the socket for its life (56 bytes and a fresh string per idle
 * connection); this asks the handle once and, when the address is the last one seen, hands out
 * the string already kept, so 10,000 connections from one balancer hold one.
 */
export function peerAddressOf(socket: Socket): string | undefined {
  const handle = (socket as unknown as { _handle?: { getpeername?(out: object): number } | null })._handle;
  if (typeof handle?.getpeername !== "function") return socket.remoteAddress;
  peer.address = undefined;
  if (handle.getpeername(peer) !== 0 || peer.address === undefined) return undefined;
  if (peer.address !== lastAddress) lastAddress = peer.address;
  peer.address = undefined;
  return lastAddress;
}
