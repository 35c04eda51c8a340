// The HTTP/1.1 heads written as octets (issue 53: no string per piece, no lower-cased copy per name) are byte for byte the heads the string building gave: that building is the oracle here, for any field names in any case and any latin1 values.
import fc from "fast-check";
import t from "tap";
import { isNamed } from "../../src/relay/header-name.js";
import type { Forwarding } from "../../src/relay/forward-plan.js";
import { NO_LISTED_NAMES, connectionListedNames, isHopByHop } from "../../src/relay/hop-by-hop.js";
import { forwardedRequestHead } from "../../src/relay/http1/forwarded-request-head.js";
import type { ParsedHead } from "../../src/relay/http1/llhttp-binding.js";
import { RequestHead } from "../../src/relay/http1/request-head.js";
import { relayedResponseHead, upstreamHeaderFacts, type ResponseFraming } from "../../src/relay/http1/response-head.js";
import { statusText } from "../../src/relay/http1/status-text.js";

// The oracle: the rules as the string building wrote them before (lower-casing each name).
const ALWAYS_REMOVED = new Set(["connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade", "expect", "http2-settings"]);
function oracleListed(values: readonly string[]): ReadonlySet<string> {
  if (values.length === 1 && ["keep-alive", "close"].includes(values[0]!.toLowerCase())) return new Set();
  const names = new Set<string>();
  for (const value of values) for (const token of value.split(",")) if (token.trim() !== "") names.add(token.trim().toLowerCase());
  return names;
}
const oracleHopByHop = (name: string, listed: ReadonlySet<string>) => listed.has(name.toLowerCase()) || ALWAYS_REMOVED.has(name.toLowerCase());

function oracleResponseHead(status: number, message: string, headers: readonly string[], hasDate: boolean, framing: ResponseFraming, keepAlive: boolean, date: string, keep?: readonly string[]): string {
  const connection = headers.filter((_, index) => index % 2 === 1 && headers[index - 1]!.toLowerCase() === "connection");
  const listed = oracleListed(connection);
  let text = `HTTP/1.1 ${status} ${message || statusText(status)}\r\n${status < 200 ? "" : keepAlive ? "connection: keep-alive\r\nkeep-alive: timeout=620\r\n" : "connection: close\r\n"}`;
  for (let index = 0; index < headers.length; index += 2) {
    const name = headers[index]!;
    if ((connection.length > 0 ? oracleHopByHop(name, listed) : ALWAYS_REMOVED.has(name.toLowerCase())) && !(keep?.includes(name.toLowerCase()) ?? false)) continue;
    if (status === 204 && name.toLowerCase() === "content-length") continue;
    text += `${name}: ${headers[index + 1]!}\r\n`;
  }
  if (!hasDate) text += `date: ${date}\r\n`;
  if (framing === "chunked") text += "transfer-encoding: chunked\r\n";
  return `${text}\r\n`;
}

function oracleRequestHead(request: RequestHead, target: string, hostOverride: string | undefined, clientAddress: string, upstreamHost: string, upgrade: "websocket" | "other" | undefined): string {
  const connection = request.joined("connection");
  const listed = connection === undefined ? new Set<string>() : oracleListed([connection]);
  let text = `${request.method} ${target} HTTP/1.1\r\n`;
  const lists: Record<string, string | undefined> = {};
  const join = (list: string | undefined, value: string) => (list === undefined ? value : `${list}, ${value}`);
  let host: string | undefined;
  let clientHost: string | undefined;
  let framing = "none";
  let contentLength: string | undefined;
  const raw = request.headers;
  for (let index = 0; index < raw.length; index += 2) {
    const name = raw[index]!;
    const lower = name.toLowerCase();
    const value = raw[index + 1]!;
    if (lower === "host") {
      clientHost ??= value;
      if (hostOverride !== undefined || listed.has("host")) continue;
      host ??= value;
    } else if (lower === "content-length") {
      contentLength = value;
      if (value !== "0") framing = "length";
      continue;
    } else if (lower === "transfer-encoding") {
      framing = "chunked";
      continue;
    } else if (lower === "x-forwarded-for" || lower === "x-forwarded-proto" || lower === "x-forwarded-host") {
      lists[lower] = join(lists[lower], value);
      continue;
    }
    if (oracleHopByHop(name, listed)) continue;
    text += `${name}: ${value}\r\n`;
  }
  if (hostOverride !== undefined) text += `host: ${hostOverride}\r\n`;
  else if (host === undefined) text += `host: ${upstreamHost}\r\n`;
  text += `x-forwarded-for: ${join(lists["x-forwarded-for"], clientAddress)}\r\nx-forwarded-proto: ${join(lists["x-forwarded-proto"], "http")}\r\n`;
  const requestHost = hostOverride ?? clientHost;
  const forwardedHost = requestHost === undefined ? lists["x-forwarded-host"] : join(lists["x-forwarded-host"], requestHost);
  if (forwardedHost !== undefined) text += `x-forwarded-host: ${forwardedHost}\r\n`;
  if (framing === "chunked") text += "transfer-encoding: chunked\r\n";
  else if (contentLength !== undefined) text += `content-length: ${contentLength}\r\n`;
  if (upgrade === "websocket") text += "connection: Upgrade\r\nupgrade: websocket\r\n";
  else if (upgrade === "other") text += "connection: close\r\n";
  return `${text}\r\n`;
}

/** Names the rules single out, and others, each in any case. */
const SPECIAL = [...ALWAYS_REMOVED, "host", "content-length", "date", "x-forwarded-for", "x-forwarded-proto", "x-forwarded-host", "user-agent", "x-custom", "etag", "server", "close", "hostx"];
const TCHAR = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
const anyCase = (name: string) => fc.array(fc.boolean(), { minLength: name.length, maxLength: name.length }).map((upper) => [...name].map((char, index) => (upper[index] ? char.toUpperCase() : char)).join(""));
const fieldName = fc.oneof(fc.constantFrom(...SPECIAL).chain(anyCase), fc.string({ unit: fc.constantFrom(...TCHAR), minLength: 1, maxLength: 20 }));
/** Field values as llhttp hands them: latin1 (obs-text included), no CR or LF. */
const fieldValue = fc.oneof(
  fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).map((code) => String.fromCharCode(code)), maxLength: 30 }),
  fc.constantFrom("keep-alive", "Close", "close, x-custom", "keep-alive, Host", "Upgrade", "0", "12"),
);
const fields = fc.array(fc.tuple(fieldName, fieldValue), { maxLength: 12 }).map((pairs) => pairs.flat());

t.test("isNamed is toLowerCase's comparison for tokens", async () => {
  fc.assert(fc.property(fieldName, fc.constantFrom(...SPECIAL), (name, lower) => isNamed(name, lower) === (name.toLowerCase() === lower)));
});

t.test("isHopByHop without lower-cased copies: the same answers", async () => {
  fc.assert(fc.property(fieldName, (name) => isHopByHop(name, NO_LISTED_NAMES) === ALWAYS_REMOVED.has(name.toLowerCase())));
});

t.test("a relayed response head: the same octets as the string building's", async () => {
  fc.assert(
    fc.property(
      fc.constantFrom(100, 103, 101, 200, 204, 304, 404, 502, 599),
      fc.oneof(fc.constant(""), fieldValue),
      fields,
      fc.constantFrom<ResponseFraming>("length", "chunked", "close", "none"),
      fc.boolean(),
      fc.boolean(),
      (status, message, headers, framing, keepAlive, upgrade) => {
        const keep = upgrade ? ["upgrade", "connection"] : undefined;
        const facts = upstreamHeaderFacts(headers);
        const named = (lower: string) => headers.some((name, index) => index % 2 === 0 && name.toLowerCase() === lower);
        if (facts.hasContentLength !== named("content-length") || facts.hasDate !== named("date")) return false;
        const written = relayedResponseHead(status, message, headers, facts, framing, keepAlive, keep).toString("latin1");
        // Our Date line, when the app sent none, is the second it was written in.
        const date = /\r\ndate: ([^\r]*)\r\n(?:transfer-encoding: chunked\r\n)?\r\n$/.exec(written)?.[1] ?? "";
        return written === oracleResponseHead(status, message, headers, facts.hasDate, framing, keepAlive, date, keep);
      },
    ),
  );
});

t.test("a forwarded request head: the same octets as the string building's", async () => {
  fc.assert(
    fc.property(
      fc.constantFrom("GET", "POST", "HEAD", "OPTIONS"),
      fields,
      fc.constantFrom("/", "/a?b=c", "/\xe9t\xe9"),
      fc.constantFrom(undefined, "override.example:81"),
      fc.constantFrom("10.0.0.7", "::1"),
      fc.constantFrom(undefined, "websocket" as const, "other" as const),
      (method, headers, target, hostOverride, clientAddress, upgrade) => {
        const parsed: ParsedHead = { versionMajor: 1, versionMinor: 1, headers, method, url: target, statusCode: 0, statusMessage: "", upgrade: upgrade !== undefined, keepAlive: true };
        const request = new RequestHead(parsed);
        // The plan as forward-plan.ts makes it for this head.
        const connection = request.joined("connection");
        const listed = connection === undefined ? NO_LISTED_NAMES : connectionListedNames(connection);
        const clientHost = request.authority;
        const plan: Forwarding = { kind: "forward", target, authority: hostOverride ?? (listed.has("host") ? undefined : clientHost), forwardedHost: hostOverride ?? clientHost, listed, upgrade };
        const head = forwardedRequestHead(request, plan, clientAddress, "app:8080");
        return head.octets.toString("latin1") === oracleRequestHead(request, target, hostOverride, clientAddress, "app:8080", upgrade);
      },
    ),
  );
});

t.test("one head after another: each buffer is its own (the scratch they are written in is never handed out)", async (t) => {
  const first = relayedResponseHead(200, "OK", ["date", "x", "a", "1"], { hasContentLength: false, hasDate: true }, "length", true);
  const copy = Buffer.from(first);
  relayedResponseHead(404, "Not Found", ["date", "y", "b", "2".repeat(5000)], { hasContentLength: false, hasDate: true }, "length", false);
  t.same(first, copy);
});
