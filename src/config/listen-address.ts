// Parses --listen's "[host]:port" into what a net server's listen() takes.

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
