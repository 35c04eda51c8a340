// The request path fuzzed against node:http: generated requests (valid, mutated, random bytes) sent in random pieces to the proxy and to a plain node:http server; the proxy must forward what node:http accepts, as it accepted it, and nothing else.
import fc from "fast-check";
import type { RecordingUpstream } from "../helpers/recording-upstream.js";
import { exchange, showBytes } from "./raw-exchange.js";
import type { ReferenceServer, ReferenceVerdict } from "./reference-server.js";
import { answersOf, disagreements, expectationFor, neitherProtocolOpening, type Defect, type Expectation } from "./request-oracle.js";
import { collectAfterBarrier } from "./upstream-barrier.js";

const token = fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,12}$/);
/** Header values: visible ASCII mostly, sometimes a tab inside or obs-text. */
const fieldValue = fc.oneof(
  { weight: 6, arbitrary: fc.stringMatching(/^[\x21-\x7e]([\x20-\x7e]{0,20}[\x21-\x7e])?$/) },
  { weight: 1, arbitrary: fc.constantFrom("", "a\tb", "caf\xe9", "\xff", "a  b", "1, 2", '"quoted"') },
);
/** Names that mean something to a proxy, and some that do not. */
const fieldName = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom("Content-Type", "Accept", "User-Agent", "Cookie", "Authorization", "Via", "X-A", "X-B", "X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Host") },
  { weight: 1, arbitrary: fc.constantFrom("Keep-Alive", "Proxy-Connection", "TE", "Trailer", "Upgrade", "Expect") },
  { weight: 2, arbitrary: token },
);
/** The same name in another case: field names are case-insensitive, and a proxy may not care either way. */
const oddCase = (name: string) => fc.array(fc.boolean(), { minLength: name.length, maxLength: name.length }).map((upper) => [...name].map((char, index) => (upper[index] ? char.toUpperCase() : char.toLowerCase())).join(""));
const separator = fc.constantFrom(": ", ":", ":  ", ":\t", ": \t ");
const trailingSpace = fc.constantFrom("", "", "", " ", "\t");

const field = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(fieldName, fieldValue) },
  { weight: 1, arbitrary: fc.tuple(fc.constant("Connection"), fc.constantFrom("close", "keep-alive", "Keep-Alive", "x-a", "X-A, x-b", "close, x-a", "TE", "content-length", "host", "upgrade")) },
  { weight: 1, arbitrary: fc.tuple(fc.constant("Expect"), fc.constantFrom("100-continue", "100-Continue", "foo")) },
  { weight: 1, arbitrary: fc.tuple(fc.constant("X-Forwarded-For"), fc.constantFrom("203.0.113.7", "203.0.113.7, 10.0.0.1", "")) },
  { weight: 1, arbitrary: fc.tuple(fc.constant("Host"), fc.constantFrom("app.example", "app.example:8443", "", "[::1]:80")) },
);
const fieldLine = fc.tuple(field, fc.boolean(), separator, trailingSpace).chain(([[name, value], recase, sep, trailing]) =>
  (recase ? oddCase(name) : fc.constant(name)).map((spelled) => `${spelled}${sep}${value}${trailing}\r\n`),
);

const method = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom("GET", "GET", "HEAD", "POST", "POST", "PUT", "DELETE", "OPTIONS", "PATCH") },
  { weight: 1, arbitrary: fc.constantFrom("TRACE", "PROPFIND", "PURGE", "SEARCH", "get", "FOO", "G@T", "PRI", "CONNECT") },
);
const pathSegment = fc.stringMatching(/^([A-Za-z0-9._~!$&'()*+,;=:@-]|%[0-9A-Fa-f]{2}|%zz){0,8}$/);
const originForm = fc
  .tuple(fc.array(pathSegment, { minLength: 1, maxLength: 4 }), fc.option(fc.stringMatching(/^[A-Za-z0-9=&%+/?._-]{0,12}$/), { freq: 3 }))
  .map(([segments, query]) => `/${segments.join("/")}${query === null ? "" : `?${query}`}`);
const target = fc.oneof(
  { weight: 20, arbitrary: originForm },
  { weight: 2, arbitrary: fc.constantFrom("/health", "/healthz", "/readyz", "/readyz?verbose", "/readyz/shutdown", "/readyz/nope", "/healthz?x=1", "/healthy") },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom("http://", "HTTP://", "https://"), fc.constantFrom("app.example", "app.example:8443", "user@app.example", ""), fc.option(originForm)).map(([scheme, authority, path]) => `${scheme}${authority}${path ?? ""}`) },
  { weight: 1, arbitrary: fc.constantFrom("*", "//x", "ftp://a/", "a:80", "?x", "/a#b", "/a b", "/\x01", "/\xff", "") },
);
const version = fc.oneof(
  { weight: 20, arbitrary: fc.constant(" HTTP/1.1") },
  { weight: 4, arbitrary: fc.constant(" HTTP/1.0") },
  { weight: 1, arbitrary: fc.constantFrom("", " HTTP/0.9", " HTTP/1.2", " HTTP/2.0", " HTTP/1.1 ", " http/1.1", " HTTP/1", " HTTP/11") },
);

/** Chunk-size lines: hex in either case, leading zeros, sometimes an extension. */
const chunkSizeLine = (size: number) =>
  fc.tuple(fc.boolean(), fc.nat(2), fc.constantFrom("", "", "", ";a=b", ';q="x y"', ";a", ";a=b;c=d")).map(([upper, zeros, extension]) => {
    const hex = size.toString(16);
    return `${"0".repeat(zeros)}${upper ? hex.toUpperCase() : hex}${extension}\r\n`;
  });
const bodyBytes = fc.oneof(fc.stringMatching(/^[a-z0-9 ]{0,30}$/), fc.uint8Array({ maxLength: 30 }).map((bytes) => Buffer.from(bytes).toString("latin1")));
const chunkedBody = fc
  .tuple(fc.array(bodyBytes.filter((piece) => piece.length > 0), { maxLength: 3 }), fc.constantFrom("", "", "X-Sum: 42\r\n"))
  .chain(([pieces, trailer]) => fc.tuple(...pieces.map((piece) => chunkSizeLine(piece.length).map((line) => `${line}${piece}\r\n`))).map((chunks) => `${chunks.join("")}0\r\n${trailer}\r\n`));

/** How the body is framed: header lines and the bytes after the head. */
const framing = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ fields: "", body: "" }) },
  { weight: 4, arbitrary: bodyBytes.chain((body) => fc.constantFrom(`${body.length}`, `${body.length}`, `00${body.length}`, `${body.length + 1}`).map((length) => ({ fields: `Content-Length: ${length}\r\n`, body }))) },
  { weight: 4, arbitrary: fc.tuple(chunkedBody, fc.constantFrom("chunked", "chunked", "Chunked", "gzip, chunked", "chunked, gzip")).map(([body, coding]) => ({ fields: `Transfer-Encoding: ${coding}\r\n`, body })) },
  { weight: 1, arbitrary: chunkedBody.map((body) => ({ fields: "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", body })) },
);

/** One request built from parts; Host first (or elsewhere, or not at all), and a head of about 16 KiB now and then. */
const request = fc
  .record({
    method,
    target,
    version,
    fields: fc.array(fieldLine, { maxLength: 5 }),
    host: fc.constantFrom("first", "first", "first", "last", "none"),
    framing,
    // node:http's limit counts the whole head; these straddle it.
    big: fc.oneof({ weight: 30, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.integer({ min: 16_200, max: 16_450 }) }),
  })
  .map(({ method, target, version, fields, host, framing, big }) => {
    const lines = [...fields, framing.fields];
    if (host === "first") lines.unshift("Host: app.example\r\n");
    if (host === "last") lines.push("Host: app.example\r\n");
    if (big !== null) lines.push(`X-Big: ${"b".repeat(big)}\r\n`);
    return `${method} ${target}${version}\r\n${lines.join("")}\r\n${framing.body}`;
  });

/** Bytes that matter to the grammar, inserted or written over others. */
const interestingByte = fc.constantFrom(0x0d, 0x0a, 0x00, 0x20, 0x09, 0x3a, 0x3b, 0x2c, 0x30, 0x61, 0x46, 0x7f, 0xff, 0x0b, 0x22, 0x5c, 0x2f, 0x3f, 0x23);
export type Mutation = { readonly kind: "flip" | "replace" | "insert" | "delete" | "truncate" | "duplicate"; readonly at: number; readonly length: number; readonly byte: number };
const mutation: fc.Arbitrary<Mutation> = fc.record({
  kind: fc.constantFrom("flip", "replace", "replace", "insert", "insert", "delete", "truncate", "duplicate"),
  at: fc.nat(),
  length: fc.integer({ min: 1, max: 40 }),
  byte: interestingByte,
});

/** Applies byte mutations in turn; the first `keep` bytes stay as they are (the h2 fuzz keeps its preface). */
export function mutate(bytes: Buffer, mutations: readonly Mutation[], keep = 0): Buffer {
  let out = bytes;
  for (const { kind, at, length, byte } of mutations) {
    if (out.length <= keep) break;
    const index = keep + (at % (out.length - keep));
    if (kind === "flip" || kind === "replace") {
      // A copy: the input may be the very buffer fast-check keeps to shrink from.
      out = Buffer.from(out);
      out[index] = kind === "flip" ? out[index]! ^ (1 << length % 8) : byte;
    } else if (kind === "insert") out = Buffer.concat([out.subarray(0, index), Buffer.from([byte]), out.subarray(index)]);
    else if (kind === "delete") out = Buffer.concat([out.subarray(0, index), out.subarray(index + 1)]);
    else if (kind === "truncate") out = out.subarray(0, index);
    else out = Buffer.concat([out.subarray(0, index + length), out.subarray(index, index + length), out.subarray(index + length)]);
  }
  return out;
}

const soupToken = fc.constantFrom("GET", "POST", " ", "/", "/a", " HTTP/1.1", "\r\n", "\n", "\r", "Host: a", "Content-Length: ", "Transfer-Encoding: chunked", "chunked", "0", "5", "hello", ":", "\r\n\r\n", "\t", "\0", ";", "Connection: close");

/** The bytes of one case: up to three requests, maybe mutated; or a soup of HTTP tokens; or random bytes. */
export const requestBytes: fc.Arbitrary<Buffer> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc
      .tuple(fc.array(request, { minLength: 1, maxLength: 3 }), fc.oneof({ weight: 3, arbitrary: fc.constant([] as Mutation[]) }, { weight: 2, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 3 }) }))
      .map(([requests, mutations]) => mutate(Buffer.from(requests.join(""), "latin1"), mutations)),
  },
  { weight: 1, arbitrary: fc.array(soupToken, { maxLength: 30 }).map((tokens) => Buffer.from(tokens.join(""), "latin1")) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 120 }).map((bytes) => Buffer.from(bytes)) },
);

/** Where the bytes are cut into writes: at most eight cuts, so a case is a handful of writes whatever its size. */
export const cuts = fc.array(fc.nat(), { maxLength: 8 });

/** The bytes cut at those points (each taken modulo the length, duplicates and ends dropped), in order. */
export function piecesOf(bytes: Buffer, cutAt: readonly number[]): Buffer[] {
  const points = [...new Set(cutAt.map((at) => at % (bytes.length + 1)))].filter((at) => at > 0 && at < bytes.length).sort((a, b) => a - b);
  return [0, ...points].map((start, index) => bytes.subarray(start, points[index] ?? bytes.length)).filter((piece) => piece.length > 0);
}

export interface FuzzSetup {
  readonly proxyPort: number;
  readonly upstream: RecordingUpstream;
  readonly reference: ReferenceServer;
  /** Today's known defects seen so far: how often, and the first bytes that showed each. */
  readonly defects: Map<Defect, { count: number; example: string }>;
  /** What the cases were, by node:http's verdict: shows the fuzz reaches past the parser. */
  readonly kinds: Map<string, number>;
  /** Uncaught exceptions while the fuzz runs (the daemon runs in this process): taken by the case that caused them. */
  readonly uncaught: Error[];
}

/** Today's one known uncaught exception: src/http/upgrade-tunnel.ts writing its 501 on a socket already ended. */
function isKnownCrash(error: Error): boolean {
  return (error as NodeJS.ErrnoException).code === "ERR_STREAM_WRITE_AFTER_END" && (error.stack ?? "").includes("writeRawError");
}

/** A verdict as text, to compare two of them. */
function summary(verdict: ReferenceVerdict): string {
  return JSON.stringify({ ...verdict, requests: verdict.requests.map((request) => ({ ...request, body: Buffer.concat(request.body).toString("latin1") })) });
}

/** Counts what node:http made of a case, for the run's summary. */
function countKinds(kinds: Map<string, number>, verdict: ReferenceVerdict, right: Expectation): void {
  const forwarded = right.outcomes.filter((outcome) => outcome.kind === "forwarded" && outcome.complete);
  const labels = [
    forwarded.length > 0 && "forwarded at least one request",
    forwarded.length > 1 && "forwarded two or more",
    forwarded.some((outcome) => outcome.kind === "forwarded" && outcome.head.body.length > 0) && "forwarded a body",
    right.outcomes.some((outcome) => outcome.kind === "answered") && "answered by the proxy itself",
    verdict.error !== undefined && verdict.error !== "HPE_INVALID_EOF_STATE" && "refused by node:http",
    verdict.error === "HPE_INVALID_EOF_STATE" && "ended mid-message",
    right.excluded && "an upgrade (not compared)",
  ];
  for (const label of labels) if (label) kinds.set(label, (kinds.get(label) ?? 0) + 1);
}

const CASE_BOUND_MS = 2_000;
/** For a case where today's daemon is known to differ from the right proxy: still ample on loopback (answers take a few ms). */
const BRIEF_BOUND_MS = 200;

/** node:http's verdict on the pieces, sent on one connection and ended by the client. */
export async function judge(reference: ReferenceServer, pieces: readonly Buffer[]): Promise<ReferenceVerdict> {
  const run = await exchange(reference.port, { pieces, responses: 0, then: "half-close", timeoutMs: CASE_BOUND_MS });
  const verdicts = reference.take();
  const verdict = verdicts[0];
  if (verdicts.length !== 1 || verdict === undefined || run.timedOut !== undefined) {
    throw new Error(`the reference did not judge ${showBytes(Buffer.concat(pieces))} (${verdicts.length} connections, timed out: ${run.timedOut})`);
  }
  return verdict;
}

/**
 * One case: the reference's verdict on the bytes, then the same pieces to the proxy, then the
 * barrier. Throws with the bytes (JSON-escaped) and every disagreement; agrees silently; when it
 * agrees only with today's known defects allowed, counts them.
 */
export async function runCase(setup: FuzzSetup, bytes: Buffer, cutAt: readonly number[]): Promise<void> {
  const pieces = piecesOf(bytes, cutAt);
  const errorsBefore = setup.upstream.parseErrors().length;
  const verdict = await judge(setup.reference, pieces);
  // The verdict is the bytes', not the pieces': node:http's on the whole agrees (so the proxy's
  // must). Except for HTTP/0.9, which the right proxy refuses anyway: llhttp loses the body of a
  // 0.9 `PRI /` request, without an error, when its `P` came in a piece of its own (this fuzz).
  if (pieces.length > 1) {
    const whole = await judge(setup.reference, [bytes]);
    const modern = (candidate: ReferenceVerdict) => candidate.requests.every((request) => request.httpVersion === "1.0" || request.httpVersion === "1.1");
    if (modern(verdict) && modern(whole) && summary(whole) !== summary(verdict)) throw new Error(`bytes: ${showBytes(bytes)}\npieces: ${JSON.stringify(pieces.map((piece) => piece.length))}\nnode:http's verdict depends on the pieces: ${summary(verdict)}, whole: ${summary(whole)}`);
  }
  const right = expectationFor(verdict, "right");
  if (verdict.requests.length === 0 && right.refusal === "required" && neitherProtocolOpening(bytes)) right.refusal = "optional";
  const today = expectationFor(verdict, "today");
  countKinds(setup.kinds, verdict, right);
  const answers = answersOf(right);
  // The exchange waits for what the right proxy does. Where today's daemon does something else
  // (it owes fewer answers, or keeps the connection open), that wait is cut short: a known defect
  // must not cost the full bound in every case that shows it.
  const briefly = right.excluded || (today.defects.size > 0 && (answersOf(today).length !== answers.length || today.closes !== right.closes));
  if (briefly) setup.kinds.set("briefly", (setup.kinds.get("briefly") ?? 0) + 1);
  const result = await exchange(setup.proxyPort, {
    pieces,
    responses: answers.length,
    // Each request gets at most one answer, in order, the last maybe none: the index-th answer is the index-th request's.
    isHead: (index) => verdict.requests[index]?.method === "HEAD",
    then: right.closes && !right.excluded ? "await-close" : "half-close",
    ...(briefly ? { timeoutMs: BRIEF_BOUND_MS, closeWaitMs: 50 } : { timeoutMs: CASE_BOUND_MS }),
  });
  const activity = await collectAfterBarrier(setup.proxyPort, setup.upstream);
  const hanging = setup.upstream.cutHanging();
  const authority = `127.0.0.1:${setup.upstream.port}`;
  const problems = disagreements(right, result, activity, authority, hanging);
  const crashes = setup.uncaught.splice(0);
  for (const error of crashes) problems.push(`uncaught exception: ${error.stack ?? error.message}`);
  const refused = setup.upstream.parseErrors().slice(errorsBefore);
  if (refused.length > 0) problems.push(`the upstream's parser refused what it got: ${refused.join(", ")}`);
  if (problems.length === 0) return;
  const todayResult = briefly ? { ...result, timedOut: undefined } : result;
  const todayProblems = disagreements(today, todayResult, activity, authority, hanging);
  if (crashes.length > 0) {
    if (crashes.every(isKnownCrash)) today.defects.add("crash");
    else todayProblems.push("uncaught exception");
  }
  // Bytes the upstream's own parser refuses are a request the proxy made up: excused only where
  // today's upgrade path is known to send two Content-Length lines, or today's daemon turns
  // another HTTP version into 1.1 (also behind its own 400: `PRI /x` as HTTP/0.9).
  if (refused.length > 0) {
    if ((right.excluded || today.excluded) && refused.every((code) => code === "HPE_UNEXPECTED_CONTENT_LENGTH")) today.defects.add("upgradeLength");
    else if (!today.defects.has("version") && !today.defects.has("parsesOn")) todayProblems.push("refused upstream");
  }
  if (today.defects.size > 0 && todayProblems.length === 0) {
    for (const defect of today.defects) {
      const seen = setup.defects.get(defect);
      if (seen) seen.count++;
      else setup.defects.set(defect, { count: 1, example: showBytes(bytes) });
    }
    return;
  }
  throw new Error(
    [
      `bytes: ${showBytes(bytes)}`,
      `pieces: ${JSON.stringify(pieces.map((piece) => piece.length))}`,
      `node:http: ${JSON.stringify({ error: verdict.error, requests: verdict.requests.map((request) => `${request.method} ${request.url} HTTP/${request.httpVersion}${request.complete ? "" : " (unfinished)"}`) })}`,
      `proxy answered: ${showBytes(result.received.slice(0, 600))}`,
      `upstream got: ${JSON.stringify(activity.requests.map((request) => ({ head: `${request.method} ${request.url}`, headers: request.rawHeaders, body: Buffer.concat(request.body).toString("latin1"), complete: request.complete })))}`,
      ...problems.map((problem) => `- ${problem}`),
      ...(today.defects.size > 0 ? [`with today's known defects allowed (${[...today.defects].join(", ")}), still:`, ...todayProblems.map((problem) => `- ${problem}`)] : []),
    ].join("\n"),
  );
}
