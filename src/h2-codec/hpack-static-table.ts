// The HPACK static table (RFC 7541 Appendix A) and the encoder's two-level lookup into it.

/** Entries 1..61 as [name, value]; index 0 of the array is entry 1. */
export const STATIC_TABLE: readonly (readonly [string, string])[] = [
  [":authority", ""],
  [":method", "GET"],
  [":method", "POST"],
  [":path", "/"],
  [":path", "/index.html"],
  [":scheme", "http"],
  [":scheme", "https"],
  [":status", "200"],
  [":status", "204"],
  [":status", "206"],
  [":status", "304"],
  [":status", "400"],
  [":status", "404"],
  [":status", "500"],
  ["accept-charset", ""],
  ["accept-encoding", "gzip, deflate"],
  ["accept-language", ""],
  ["accept-ranges", ""],
  ["accept", ""],
  ["access-control-allow-origin", ""],
  ["age", ""],
  ["allow", ""],
  ["authorization", ""],
  ["cache-control", ""],
  ["content-disposition", ""],
  ["content-encoding", ""],
  ["content-language", ""],
  ["content-length", ""],
  ["content-location", ""],
  ["content-range", ""],
  ["content-type", ""],
  ["cookie", ""],
  ["date", ""],
  ["etag", ""],
  ["expect", ""],
  ["expires", ""],
  ["from", ""],
  ["host", ""],
  ["if-match", ""],
  ["if-modified-since", ""],
  ["if-none-match", ""],
  ["if-range", ""],
  ["if-unmodified-since", ""],
  ["last-modified", ""],
  ["link", ""],
  ["location", ""],
  ["max-forwards", ""],
  ["proxy-authenticate", ""],
  ["proxy-authorization", ""],
  ["range", ""],
  ["referer", ""],
  ["refresh", ""],
  ["retry-after", ""],
  ["server", ""],
  ["set-cookie", ""],
  ["strict-transport-security", ""],
  ["transfer-encoding", ""],
  ["user-agent", ""],
  ["vary", ""],
  ["via", ""],
  ["www-authenticate", ""],
];

/** How many entries the static table has: dynamic entries are numbered from 62. */
export const STATIC_TABLE_LENGTH = 61;

/** A name of the static table: its lowest index, and the index of each of its values. */
export interface StaticName {
  readonly index: number;
  readonly values: ReadonlyMap<string, number>;
}

function buildLookup(): ReadonlyMap<string, StaticName> {
  const names = new Map<string, { index: number; values: Map<string, number> }>();
  STATIC_TABLE.forEach(([name, value], i) => {
    let entry = names.get(name);
    if (entry === undefined) names.set(name, (entry = { index: i + 1, values: new Map() }));
    if (!entry.values.has(value)) entry.values.set(value, i + 1);
  });
  return names;
}

/** The encoder's lookup: name, then value (built once at load; a Map lookup per field, no string building). */
export const STATIC_LOOKUP = buildLookup();
