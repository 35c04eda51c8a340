// Parses --listen's "[host]:port" into what a net server's listen() takes, and --admin-listen's loopback-only form.
import { usageError } from "../errors.js";

/** Where the server listens. `host` undefined means every IPv4 and IPv6 address. */
export interface ListenAddress {
  readonly host: string | undefined;
  readonly port: number;
}

const BRACKETED = /^\[([0-9A-Fa-f:.]+(?:%[\w.-]+)?)\]:(\d+)$/;
const PLAIN = /^([^\s:[\]]*):(\d+)$/;

/** Parses `:8080`, `0.0.0.0:8080`, `localhost:8080` or `[::1]:8080`; undefined if malformed. */
export function parseListenAddress(text: string): ListenAddress | undefined {
  const match = BRACKETED.exec(text) ?? PLAIN.exec(text);
  if (!match) return undefined;
  const port = Number(match[2]);
  if (!Number.isSafeInteger(port) || port > 65535) return undefined;
  return { host: match[1] === "" ? undefined : match[1], port };
}

/** The address back in `[host]:port` form, as logged. */
export function formatListenAddress(address: ListenAddress): string {
  if (address.host === undefined) return `:${address.port}`;
  return address.host.includes(":") ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`;
}

/** 127.0.0.0/8 in dotted form: the whole block is loopback on Linux. */
const IPV4_LOOPBACK = /^127\.(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){2}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/** Whether `host` can only be reached from inside the pod: 127.0.0.0/8, ::1 or localhost. */
export function isLoopbackHost(host: string | undefined): boolean {
  if (host === undefined) return false;
  return host === "localhost" || host === "::1" || IPV4_LOOPBACK.test(host);
}

/**
 * `--admin-listen`: a loopback `host:port` only, so that nothing outside the pod can change
 * readiness or start a drain (CONTRACT §14); undefined when not given.
 */
export function parseAdminListen(input: string, text: string | undefined): ListenAddress | undefined {
  if (text === undefined) return undefined;
  const address = parseListenAddress(text);
  if (address === undefined) throw usageError(input, "expected host:port, like 127.0.0.1:9901", text);
  if (!isLoopbackHost(address.host)) throw usageError(input, "expected a loopback address (127.0.0.0/8, [::1] or localhost)", text);
  return address;
}
