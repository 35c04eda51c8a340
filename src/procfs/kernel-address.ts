// Pure: a socket table's hex address (`0100007F`, 32 digits for tcp6) -> the IP as people write it (`127.0.0.1`, `::1`, `::ffff:127.0.0.1`).

/**
 * The kernel prints each 32-bit word of the address with `%08X` in the host's byte order. Every
 * architecture this ships for (x64, arm64) is little-endian, so each word's bytes are reversed to
 * get network order, as prometheus/procfs does.
 */
function networkBytes(hex: string): number[] {
  const bytes: number[] = [];
  for (let word = 0; word < hex.length; word += 8) {
    for (let byte = 3; byte >= 0; byte--) bytes.push(Number.parseInt(hex.slice(word + byte * 2, word + byte * 2 + 2), 16));
  }
  return bytes;
}

/** `hex` is 8 (tcp) or 32 (tcp6) hex digits, as the parser has checked. */
export function formatKernelAddress(hex: string): string {
  const bytes = networkBytes(hex);
  if (bytes.length === 4) return bytes.join(".");
  // An IPv4-mapped address (an AF_INET6 socket bound to an IPv4 address) in its usual form.
  if (bytes.slice(0, 10).every((byte) => byte === 0) && bytes[10] === 0xff && bytes[11] === 0xff) return `::ffff:${bytes.slice(12).join(".")}`;
  const groups: number[] = [];
  for (let index = 0; index < 16; index += 2) groups.push((bytes[index]! << 8) | bytes[index + 1]!);
  return compressIpv6(groups);
}

/** RFC 5952: lower case, no leading zeros, the longest run of two or more zero groups (the first of equals) as `::`. */
function compressIpv6(groups: readonly number[]): string {
  let bestStart = -1;
  let bestLength = 1;
  for (let start = 0; start < groups.length; ) {
    if (groups[start] !== 0) {
      start++;
      continue;
    }
    let end = start;
    while (end < groups.length && groups[end] === 0) end++;
    if (end - start > bestLength) [bestStart, bestLength] = [start, end - start];
    start = end;
  }
  const text = (part: readonly number[]) => part.map((group) => group.toString(16)).join(":");
  if (bestStart < 0) return text(groups);
  return `${text(groups.slice(0, bestStart))}::${text(groups.slice(bestStart + bestLength))}`;
}

/** `127.0.0.1:8000`, `[::1]:8000`: how logs name a socket. */
export function formatSocket(address: string, port: number): string {
  return address.includes(":") ? `[${address}]:${port}` : `${address}:${port}`;
}
