// The hand-written access line: valid JSON for any input (property test against JSON.stringify), and byte for byte the line pino wrote for the same fields.
import fc from "fast-check";
import { pino } from "pino";
import t from "tap";
import { AccessLineWriter, type LineFrame } from "../../src/access-log/access-line.js";
import type { AccessLogEntry } from "../../src/access-log/access-log.js";
import { NO_ROOM, writeJsonMilliseconds, writeJsonNumber } from "../../src/access-log/json-bytes.js";
import { jsonMilliseconds, jsonNumber, jsonString } from "../../src/access-log/json-text.js";

const TIME = 1_767_225_600_000;
const FRAME: LineFrame = { level: 30, time: () => `,"time":${TIME}`, bindings: `,"name":"readiness-proxy"`, messageKey: "msg" };

/** What the line must say: the record JSON.stringify writes for the same fields, in the same order, optional ones absent when absent. */
function expected(entry: AccessLogEntry): string {
  const micro = (ms: number) => Math.round(ms * 1000) / 1000;
  const query = entry.path.indexOf("?");
  const remoteAddr = entry.remoteAddr?.startsWith("::ffff:") && entry.remoteAddr.includes(".") ? entry.remoteAddr.slice(7) : entry.remoteAddr;
  return `${JSON.stringify({
    level: 30,
    time: TIME,
    name: "readiness-proxy",
    method: entry.method,
    path: query < 0 ? entry.path : entry.path.slice(0, query),
    protocol: entry.protocol,
    status: entry.status,
    grpcStatus: entry.grpcStatus,
    bytesSent: entry.bytesSent,
    durationMs: micro(entry.durationMs),
    upstreamMs: entry.upstreamMs === undefined ? undefined : micro(entry.upstreamMs),
    queueMs: entry.queueMs === undefined ? undefined : micro(entry.queueMs),
    requestId: entry.requestId,
    remoteAddr,
    userAgent: entry.userAgent,
    aborted: entry.aborted === true ? true : undefined,
    msg: "request",
  })}\n`;
}

/** Strings as hostile as a client can make them: quotes, backslashes, control characters, lone surrogates, non-ASCII, or any UTF-16 unit at all. */
const hostile = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary" }),
  fc.string({ unit: fc.constantFrom("\"", "\\", "\u0000", "\n", "\u001f", "\u007f", "\ud800", "\udfff", "\ud83d\ude00", "é", "\u2028", "a", "/") }),
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)) }),
);
const maybe = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });
const duration = fc.oneof(fc.double({ min: 0, max: 1e7, noNaN: true }), fc.constantFrom(0, 0.0005, 0.0015, 1e-7, 123.4565));
const entry: fc.Arbitrary<AccessLogEntry> = fc.record({
  method: fc.oneof(fc.constantFrom("GET", "POST", "M-SEARCH", "PROPFIND"), hostile),
  path: fc.oneof(hostile, hostile.map((text) => `/${text}?${text}`)),
  protocol: fc.constantFrom("HTTP/1.1", "HTTP/2"),
  status: fc.oneof(fc.constant(0), fc.integer({ min: 100, max: 999 })),
  grpcStatus: maybe(fc.integer({ min: 0, max: 16 })),
  bytesSent: fc.oneof(fc.nat(), fc.maxSafeNat()),
  durationMs: duration,
  upstreamMs: maybe(duration),
  queueMs: maybe(duration),
  requestId: fc.oneof(fc.uuid(), hostile),
  remoteAddr: maybe(fc.oneof(fc.ipV4(), fc.ipV6(), fc.ipV4().map((ip) => `::ffff:${ip}`), hostile)),
  userAgent: maybe(hostile),
  aborted: maybe(fc.boolean()),
});

t.test("any entry: the line is one line of valid JSON, and says what JSON.stringify of the same fields says", async (t) => {
  const writer = new AccessLineWriter(FRAME);
  fc.assert(
    fc.property(entry, (given) => {
      const line = writer.line(given);
      const want = expected(given);
      // One line; parses; its fields are the entry's (a lone surrogate comes back as the same lone surrogate); the same text, key order included.
      return line.indexOf("\n") === line.length - 1 && `${JSON.stringify(JSON.parse(line))}\n` === want && line === want;
    }),
    { numRuns: 2_000 },
  );
  t.pass("2,000 random entries");
});

t.test("written in place at any offset and limit: the line's UTF-8 bytes, or NO_ROOM, and never a byte at or past the limit", async (t) => {
  const writer = new AccessLineWriter(FRAME);
  const SENTINEL = 0xaa;
  fc.assert(
    fc.property(entry, fc.nat(64), fc.integer({ min: -8, max: 8 }), (given, offset, slack) => {
      const want = Buffer.from(expected(given), "utf8");
      const limit = Math.max(offset, offset + want.length + slack);
      const buffer = Buffer.alloc(limit + 16, SENTINEL);
      const end = writer.encode(given, buffer, offset, limit);
      const untouched = buffer.subarray(limit).every((byte) => byte === SENTINEL) && buffer.subarray(0, offset).every((byte) => byte === SENTINEL);
      // Exactly enough room, or more: the line. Less: NO_ROOM.
      return untouched && (slack >= 0 ? end === offset + want.length && buffer.subarray(offset, end).equals(want) : end === NO_ROOM);
    }),
    { numRuns: 2_000 },
  );
  t.pass("2,000 random entries, offsets and limits");
});

t.test("numbers and durations in place: JSON.stringify's text, NO_ROOM when the digits do not fit", async (t) => {
  const written = (write: (value: number, buffer: Buffer, offset: number, limit: number) => number, value: number, room = 64) => {
    const buffer = Buffer.alloc(room);
    const end = write(value, buffer, 0, room);
    return end === NO_ROOM ? undefined : buffer.toString("utf8", 0, end);
  };
  for (const value of [0, 7, 10, 99, 100, 404, 2 ** 31, 1_767_225_600_000, 2 ** 50 + 9, Number.MAX_SAFE_INTEGER, -1, 1.5, 1e21, NaN, Infinity]) t.equal(written(writeJsonNumber, value), JSON.stringify(value) ?? "null", String(value));
  fc.assert(fc.property(fc.oneof(fc.maxSafeNat(), fc.double()), (value) => written(writeJsonNumber, value) === jsonNumber(value)), { numRuns: 20_000 });
  fc.assert(fc.property(fc.oneof(fc.double({ min: -1e4, max: 1e13 }), fc.integer({ min: 0, max: 2 ** 31 }).map((micros) => micros / 1000)), (ms) => written(writeJsonMilliseconds, ms) === jsonMilliseconds(ms)), { numRuns: 20_000 });
  t.equal(written(writeJsonNumber, 12345, 4), undefined, "five digits in four bytes");
  t.equal(written(writeJsonMilliseconds, 1.25, 3), undefined, "1.25 in three bytes");
  t.equal(written(writeJsonMilliseconds, 1.25, 4), "1.25");
});

t.test("strings and numbers: the same text as JSON.stringify, lone surrogates escaped as its well-formed output does", async (t) => {
  for (const text of ["", "plain", "quote\"", "back\\slash", "\u0000\u001f", "\ud800", "x\udfffy", "\ud83d\ude00", "é", "\u2028", "\u007f"]) t.equal(jsonString(text), JSON.stringify(text), [...text].map((unit) => unit.codePointAt(0)!.toString(16)).join(" ") || "empty");
  t.equal(jsonString("\ud800"), '"\\ud800"');
  fc.assert(fc.property(hostile, (text) => jsonString(text) === JSON.stringify(text)));
  for (const value of [0, -0, 1, 1.5, 1e21, 1e-7, Number.MAX_SAFE_INTEGER, NaN, Infinity, -Infinity]) t.equal(jsonNumber(value), JSON.stringify(value), String(value));
});

/** A UTF-16 unit of a surrogate pair without its other half. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const wellFormed = (entry: AccessLogEntry) => ![entry.method, entry.path, entry.requestId, entry.remoteAddr ?? "", entry.userAgent ?? ""].some((text) => LONE_SURROGATE.test(text));

// The one difference on purpose: pino wrote a lone surrogate as is, and the UTF-8 encoding of stdout turned it into U+FFFD; the line now escapes it (`\udfff`), as JSON.stringify does.
t.test("durations: the text JSON.stringify writes for the value rounded to the microsecond, from integers below 2^31 µs and from the double above", async (t) => {
  const rounded = (ms: number) => JSON.stringify(Math.round(ms * 1000) / 1000);
  const cases = [0, -0, 0.0004, 0.0005, 0.0015, 0.01, 0.1, 1, 1.1, 1.23, 1.234, 1.2345, 10.05, 999.999, 1834.2217, 2_147_483.647, 2_147_483.648, 1e7, 1e-7, 123.4565, -1, -0.0004, NaN, Infinity, -Infinity];
  for (const ms of cases) t.equal(jsonMilliseconds(ms), rounded(ms), String(ms));
  fc.assert(fc.property(fc.oneof(fc.double({ min: -1e4, max: 1e13, noNaN: true }), fc.integer({ min: 0, max: 2 ** 31 }).map((micros) => micros / 1000)), (ms) => jsonMilliseconds(ms) === rounded(ms)), { numRuns: 20_000 });
});

t.test("byte for byte what pino wrote for the same record before (level, time, bindings, key order, msg last), for well-formed strings", async (t) => {
  const pinoLines: string[] = [];
  const log = pino({ level: "info", base: { name: "readiness-proxy" }, timestamp: () => `,"time":${TIME}` }, { write: (line: string) => pinoLines.push(line) });
  const writer = new AccessLineWriter(FRAME);
  fc.assert(
    fc.property(entry.filter(wellFormed), (given) => {
      const { path, protocol, status, grpcStatus, bytesSent, requestId, userAgent } = given;
      const micro = (ms: number | undefined) => (ms === undefined ? undefined : Math.round(ms * 1000) / 1000);
      const remoteAddr = given.remoteAddr?.startsWith("::ffff:") && given.remoteAddr.includes(".") ? given.remoteAddr.slice(7) : given.remoteAddr;
      const query = path.indexOf("?");
      log.info(
        {
          method: given.method,
          path: query < 0 ? path : path.slice(0, query),
          protocol,
          status,
          grpcStatus,
          bytesSent,
          durationMs: micro(given.durationMs),
          upstreamMs: micro(given.upstreamMs),
          queueMs: micro(given.queueMs),
          requestId,
          remoteAddr,
          userAgent,
          aborted: given.aborted === true ? true : undefined,
        },
        "request",
      );
      return writer.line(given) === pinoLines.pop();
    }),
    { numRuns: 500 },
  );
  t.pass("500 random entries");
});
