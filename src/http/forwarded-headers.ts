// The request headers sent upstream: the client's minus hop-by-hop ones, with X-Forwarded-For, -Proto and -Host appended.
import type { IncomingMessage } from "node:http";
import { NO_LISTED_NAMES, connectionListedNames, isHopByHop } from "./hop-by-hop.js";


/**
 * The client's headers minus hop-by-hop ones, plus X-Forwarded-For, -Proto and -Host appended.
 * `hostOverride` (an absolute-form target's authority) replaces the client's Host (RFC 9112 §3.2.2).
 */
export function requestHeaders(req: IncomingMessage, hostOverride?: string): string[] {
  const raw = req.rawHeaders;
  const connection = req.headers.connection;
  const listed = connection === undefined ? NO_LISTED_NAMES : connectionListedNames([connection]);
  const headers: string[] = [];
  let forwardedFor: string | undefined;
  let forwardedProto: string | undefined;
  let forwardedHost: string | undefined;
  for (let index = 0; index < raw.length; index += 2) {
    const name = raw[index]!;
    const value = raw[index + 1]!;
    if (name.length >= 15 && name.length <= 17) {
      // x-forwarded-for (15), -host (16), -proto (17): collected to append our hop.
      const lower = name.toLowerCase();
      if (lower === "x-forwarded-for") {
        forwardedFor = forwardedFor === undefined ? value : `${forwardedFor}, ${value}`;
        continue;
      }
      if (lower === "x-forwarded-host") {
        forwardedHost = forwardedHost === undefined ? value : `${forwardedHost}, ${value}`;
        continue;
      }
      if (lower === "x-forwarded-proto") {
        forwardedProto = forwardedProto === undefined ? value : `${forwardedProto}, ${value}`;
        continue;
      }
    }
    if (isHopByHop(name, listed)) continue;
    if (hostOverride !== undefined && name.length === 4 && name.toLowerCase() === "host") continue;
    headers.push(name, value);
  }
  if (hostOverride !== undefined) headers.push("host", hostOverride);
  const clientAddress = stripMappedPrefix(req.socket.remoteAddress ?? "");
  headers.push(
    "x-forwarded-for",
    forwardedFor === undefined ? clientAddress : `${forwardedFor}, ${clientAddress}`,
    "x-forwarded-proto",
    forwardedProto === undefined ? "http" : `${forwardedProto}, http`,
  );
  const host = hostOverride ?? req.headers.host;
  if (host !== undefined) headers.push("x-forwarded-host", forwardedHost === undefined ? host : `${forwardedHost}, ${host}`);
  else if (forwardedHost !== undefined) headers.push("x-forwarded-host", forwardedHost);
  return headers;
}

/** `::ffff:10.0.0.1` -> `10.0.0.1`: a dual-stack listener reports IPv4 clients mapped. */
function stripMappedPrefix(address: string): string {
  return address.startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address;
}
