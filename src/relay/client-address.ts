// The client's address as the relay reports it (X-Forwarded-For, Forwarded, the access log), whichever protocol brought the request.

/** `::ffff:10.0.0.1` -> `10.0.0.1`: a dual-stack listener reports IPv4 clients mapped. */
export function clientAddressOf(remoteAddress: string | undefined): string {
  const address = remoteAddress ?? "";
  return address.startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address;
}
