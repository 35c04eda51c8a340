// The request fuzz's oracle: from node:http's verdict on some bytes, what the proxy must do with them (or, for today's daemon, may do), and the comparison with what it did.
import { authorityIsValid } from "../../src/http/authority.js";
import type { RecordedRequest } from "../helpers/recording-upstream.js";
import type { ExchangeResult } from "./raw-exchange.js";
import type { ReferenceRequest, ReferenceVerdict } from "./reference-server.js";
import type { CaseActivity } from "./upstream-barrier.js";

/** Never forwarded (CONTRACT §5), and Expect: node:http answers 100-continue itself. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade", "expect", "http2-settings"]);
/** Collected wherever they stand and appended with the proxy's hop. */
const FORWARDED = new Set(["x-forwarded-for", "x-forwarded-host", "x-forwarded-proto"]);
/** What the proxy writes upstream for its own framing of the request: not compared (bodies are, decoded). */
const FRAMING = new Set(["content-length", "transfer-encoding", "connection"]);
/** The daemon's absolute-form rule (src/http/request-target.ts): http(s), an authority without userinfo (and passing the authority rule), no fragment. */
const ABSOLUTE_FORM = /^https?:\/\/([^/?#@\s]+)([/?][^#\s]*)?$/i;
/** The input ended mid-message: the client's doing, not a refusal. */
const EOF_ERROR = "HPE_INVALID_EOF_STATE";

/** Today's known defects, by the rule of node:http (or the daemon) that differs from the right one. */
export const DEFECTS = {
  version: "an HTTP version other than 1.0 and 1.1 (0.9, 2.0) is accepted and forwarded as HTTP/1.1 (which may not parse: `PRI /x`)",
  transferCoding: "a Transfer-Encoding other than plain chunked (gzip, chunked; empty) is accepted and the coding dropped",
  parsesOn: "requests pipelined behind the proxy's own 400 (no Host, two Hosts, a bad target) are still forwarded",
  cutShort: "a parse error, a CONNECT, or bytes after Connection: close behind in-flight requests: node:http's 400 (or nothing) replaces their answers, and their upstream exchanges are aborted or left hanging",
  upgradeLength: "an upgrade request with a Content-Length reaches the upstream with two Content-Length lines",
  continueInside: "Expect: 100-continue on a pipelined request whose answer is queued: node:http writes the 100 between that answer's head and body",
  upgradeJumpsQueue: "an upgrade request pipelined behind unanswered ones: the upgrade path writes on the socket at once, ahead of (and in place of) the answers owed",
  crash: "an uncaught exception (the upgrade path's 501 written after the proxy's own 400 ended the socket): in production the daemon exits 1",
} as const;
export type Defect = keyof typeof DEFECTS;

export interface ExpectedHead {
  readonly method: string;
  readonly url: string;
  /** undefined: none, or the one the proxy sends for its upstream (the client sent none, or listed it in Connection). */
  readonly host: string | undefined;
  /** Lower-case names, in order, without Host and framing. */
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly body: Buffer;
}

export type Outcome =
  | { readonly kind: "forwarded"; readonly method: string; readonly head: ExpectedHead; readonly complete: boolean }
  | { readonly kind: "answered"; readonly method: string; readonly statuses: readonly number[] };

export interface Expectation {
  readonly outcomes: Outcome[];
  /** The proxy closes the connection on its own after the outcomes; otherwise it waits for the client's end. */
  closes: boolean;
  /** A 4xx after the outcomes for what the parser refused: required when nothing else was answered. */
  refusal: "required" | "optional" | "none";
  /** An upgrade took the connection elsewhere (or, today, a version that is not modelled): nothing past the outcomes is compared. */
  excluded: boolean;
  /** Today only: the known defects that shaped this expectation. */
  readonly defects: Set<Defect>;
}

/** The statuses the proxy answers with, one list of acceptable ones per outcome that is answered. */
export function answersOf(expectation: Expectation): Array<{ readonly statuses: readonly number[]; readonly method: string }> {
  return expectation.outcomes.flatMap((outcome): Array<{ statuses: readonly number[]; method: string }> =>
    outcome.kind === "answered" ? [outcome] : outcome.complete ? [{ statuses: [200], method: outcome.method }] : [],
  );
}

/**
 * A first line that is whole and has no HTTP version: neither HTTP/1.x nor the HTTP/2 preface.
 * The proxy closes without its 400 when that line came whole in the connection's first read
 * (RFC 9113 §3.4, h2spec 3.5/2), which depends on how the pieces were read: the 400 is optional.
 */
export function neitherProtocolOpening(bytes: Buffer): boolean {
  const lineEnd = bytes.indexOf(0x0a);
  return lineEnd !== -1 && !/ HTTP\//i.test(bytes.latin1Slice(0, lineEnd));
}

/**
 * What the proxy must do with the requests node:http accepted, in order, until one ends the
 * connection. "right" is what the relay must do; "today" is what today's daemon does where it
 * is known to be wrong (each such rule named in `defects`).
 */
export function expectationFor(verdict: ReferenceVerdict, mode: "right" | "today"): Expectation {
  const expectation = walk(verdict, mode === "today");
  // Today node:http answers what it refuses at once, in place of the answers still owed on the
  // connection, and the exchanges behind them are aborted or forgotten.
  if (mode === "today" && verdict.error !== undefined && verdict.error !== EOF_ERROR && expectation.outcomes.length > 0) expectation.defects.add("cutShort");
  return expectation;
}

/** The requests in order, each to its outcome, until one ends the connection. */
function walk(verdict: ReferenceVerdict, today: boolean): Expectation {
  const expectation: Expectation = { outcomes: [], closes: false, refusal: "none", excluded: false, defects: new Set() };
  const realError = verdict.error !== undefined && verdict.error !== EOF_ERROR;
  const answered = (request: ReferenceRequest, statuses: readonly number[]) => expectation.outcomes.push({ kind: "answered", method: request.method, statuses });
  /** The requests ran out: the parser refused what followed (a 4xx and the close), or the bytes ended (the client's end may get a 4xx). */
  const endOfRequests = () => {
    if (realError) {
      expectation.closes = true;
      expectation.refusal = answersOf(expectation).length === 0 ? "required" : "optional";
    } else if (verdict.error === EOF_ERROR) expectation.refusal = "optional";
    return expectation;
  };
  /** A proxy-made 4xx that ends the connection: nothing behind it may be forwarded. */
  const closingAnswer = (request: ReferenceRequest, statuses: readonly number[], more: boolean) => {
    answered(request, statuses);
    expectation.closes = true;
    if (today && more) expectation.defects.add("parsesOn");
    return expectation;
  };
  for (const [index, request] of verdict.requests.entries()) {
    const more = index < verdict.requests.length - 1;
    const version = request.httpVersion;
    const versionKnown = version === "1.0" || version === "1.1";
    // The version is judged first, whatever the method: `CONNECT *` with no version (0.9) is a
    // 505 like any other 0.9 request line (found by a 20,000-run fuzz, seed 377984288).
    if (!today && !versionKnown) return closingAnswer(request, [400, 505], more);
    if (request.upgrade && request.method === "CONNECT") {
      // Not a reverse proxy's to serve: an error answer or none, the close, and nothing forwarded;
      // the answers owed to the requests before it are still given.
      expectation.closes = true;
      expectation.refusal = "optional";
      if (today && expectation.outcomes.length > 0) expectation.defects.add("cutShort");
      return expectation;
    }
    if (request.upgrade) {
      // Compared up to here; the answers owed before it still come first (today they may not).
      expectation.excluded = true;
      if (today && answersOf(expectation).length > 0) expectation.defects.add("upgradeJumpsQueue");
      return expectation;
    }
    if (!versionKnown) {
      // Today it goes up as HTTP/1.1, where it may not even parse (HTTP/0.9 lets `PRI /x` through): not modelled further.
      expectation.defects.add("version");
      expectation.excluded = true;
      return expectation;
    }
    const codings = headerValues(request, "transfer-encoding");
    if (codings.length > 0 && trimOws(codings.join(",")).toLowerCase() !== "chunked") {
      if (!today) return closingAnswer(request, [400, 501], more);
      expectation.defects.add("transferCoding");
    }
    // node:http's rules, before any request event: 400 for HTTP/1.1 without Host, 417 for an unknown expectation.
    if (version === "1.1" && headerValues(request, "host").length === 0) return closingAnswer(request, [400], more);
    // The relay's own rule, stricter than node:http's (RFC 9112 §3.2): two Host lines are a 400.
    if (!today && headerValues(request, "host").length > 1) return closingAnswer(request, [400], more);
    let target: { url: string; authority: string | undefined } | undefined;
    const answersBefore = expectation.outcomes.length;
    if (request.expectationFailed) answered(request, [417]);
    else if (isHealthPath(request.method, request.url)) answered(request, request.url.startsWith("/readyz/") ? [200, 404, 503] : [200, 503]);
    // The one authority rule (issue 52; its own table in authority-rule.test.ts): a Host that fails it is a 400 before the target is looked at.
    else if (!today && headerValues(request, "host").length === 1 && !authorityIsValid(headerValues(request, "host")[0]!)) return closingAnswer(request, [400], more);
    else if (request.url.startsWith("/")) target = { url: request.url, authority: undefined };
    // An absolute-form authority passes the same authority rule as a Host (it becomes the app's Host).
    else if (ABSOLUTE_FORM.test(request.url) && (today || authorityIsValid(ABSOLUTE_FORM.exec(request.url)![1]!))) {
      const [, authority, rest = ""] = ABSOLUTE_FORM.exec(request.url)!;
      target = { url: rest.startsWith("/") ? rest : `/${rest}`, authority };
    } else if (request.method === "OPTIONS" && request.url === "*") answered(request, [200]);
    else return closingAnswer(request, [400], more);
    if (today && answersBefore > 0 && version === "1.1" && /100-continue/i.test(headerValues(request, "expect").join(","))) {
      expectation.defects.add("continueInside");
    }
    if (target !== undefined) {
      // RFC 9112 §3.2: more than one Host is a 400 (the daemon's, from undici; node:http lets it
      // through). An absolute-form target's authority replaces them all, and a Host listed in
      // Connection is dropped (today's rule): either way the app never sees them.
      const hosts = target.authority === undefined && !connectionListed(request).has("host") ? headerValues(request, "host").length : 0;
      if (hosts > 1) return closingAnswer(request, [400], more);
      expectation.outcomes.push({ kind: "forwarded", method: request.method, head: expectedHead(request, target.url, target.authority), complete: request.complete });
    }
    // RFC 9112 §9.6: nothing after `Connection: close` is processed (llhttp calls it
    // HPE_CLOSED_CONNECTION). An answer of the proxy's own ends the connection at once; a
    // forwarded request whose body is still coming keeps it until the body ends.
    if (!request.keepAlive && (request.complete || target === undefined)) {
      expectation.closes = true;
      return expectation;
    }
    // The bytes ended inside this request, or its body was refused.
    if (!request.complete) return endOfRequests();
  }
  return endOfRequests();
}

/** The head the upstream must receive: hop-by-hop names gone, X-Forwarded-* appended, Host kept or replaced by an absolute-form authority. */
function expectedHead(request: ReferenceRequest, url: string, authority: string | undefined): ExpectedHead {
  const listed = connectionListed(request);
  const collected = new Map<string, string>();
  const headers: Array<[string, string]> = [];
  for (let index = 0; index < request.rawHeaders.length; index += 2) {
    const name = request.rawHeaders[index]!.toLowerCase();
    const value = request.rawHeaders[index + 1]!;
    // Today's daemon collects these before the hop-by-hop rule: listing them in Connection does not remove them.
    if (FORWARDED.has(name)) collected.set(name, collected.has(name) ? `${collected.get(name)}, ${value}` : value);
    else if (!HOP_BY_HOP.has(name) && !listed.has(name) && name !== "host" && name !== "content-length") headers.push([name, value]);
  }
  const clientHost = headerValues(request, "host")[0];
  // Trimmed: spaces and tabs at either end of a field value do not survive the parser on the
  // other side (an empty Host leaves "a, "). Only those: 0xA0 is a byte of the value.
  const appended = (name: string, hop: string) => trimOws(collected.has(name) ? `${collected.get(name)}, ${hop}` : hop);
  headers.push(["x-forwarded-for", appended("x-forwarded-for", "127.0.0.1")], ["x-forwarded-proto", appended("x-forwarded-proto", "http")]);
  const forwardedHost = authority ?? clientHost;
  if (forwardedHost !== undefined) headers.push(["x-forwarded-host", appended("x-forwarded-host", forwardedHost)]);
  else if (collected.has("x-forwarded-host")) headers.push(["x-forwarded-host", trimOws(collected.get("x-forwarded-host")!)]);
  return { method: request.method, url, host: authority ?? (listed.has("host") ? undefined : clientHost), headers, body: Buffer.concat(request.body) };
}

/** RFC 9110 §5.6.3 OWS: spaces and tabs (String#trim would take 0xA0, a byte of the value, too). */
function trimOws(value: string): string {
  return value.replace(/^[ \t]+|[ \t]+$/g, "");
}

/** Names listed in the Connection header lines, lower-case (String#trim, as src/http/hop-by-hop.ts does). */
function connectionListed(request: ReferenceRequest): Set<string> {
  return new Set(headerValues(request, "connection").flatMap((value) => value.split(",").map((name) => name.trim().toLowerCase())));
}

function headerValues(request: { readonly rawHeaders: readonly string[] }, lowerName: string): string[] {
  const values: string[] = [];
  for (let index = 0; index < request.rawHeaders.length; index += 2) {
    if (request.rawHeaders[index]!.toLowerCase() === lowerName) values.push(request.rawHeaders[index + 1]!);
  }
  return values;
}

/** CONTRACT §2: GET and HEAD on /health, /healthz, /readyz (query ignored) and every /readyz/<x> (404 when x names no check). */
function isHealthPath(method: string, url: string): boolean {
  if (method !== "GET" && method !== "HEAD") return false;
  if (["/health", "/healthz", "/readyz"].some((path) => url === path || url.startsWith(`${path}?`))) return true;
  return url.startsWith("/readyz/");
}

/** Everything that differs between the expectation and what the proxy did: empty when it agrees. */
export function disagreements(expectation: Expectation, result: ExchangeResult, activity: CaseActivity, upstreamAuthority: string, hanging: number): string[] {
  const problems: string[] = [];
  // Today, what follows the proxy's own 400 is processed too, and may cut the answers short (a
  // CONNECT, a parse error); a 100 inside an answer ends the reading (and the client's connection).
  const garbled = expectation.defects.has("continueInside");
  const cutShort = garbled || (["cutShort", "parsesOn", "upgradeJumpsQueue"] as const).some((defect) => expectation.defects.has(defect));
  const mayHang = cutShort || expectation.excluded;
  if (result.malformed && !garbled) problems.push("the responses do not parse");
  if (result.timedOut !== undefined && !expectation.excluded) problems.push(`timed out waiting for ${result.timedOut === "close" ? "the close" : result.timedOut}`);
  // Answers, in order.
  const wanted = answersOf(expectation).map(({ statuses }) => statuses);
  const got = result.finals;
  let matched = 0;
  while (matched < wanted.length && matched < got.length && wanted[matched]!.includes(got[matched]!)) matched++;
  const rest = got.slice(matched);
  // A refusal: a 4xx, or the 501 of what is not served (CONNECT, over either protocol).
  const is4xx = (status: number) => (status >= 400 && status < 500) || status === 501;
  if (cutShort) {
    if (!expectation.excluded && (rest.length > 1 || !rest.every(is4xx))) problems.push(`answers ${JSON.stringify(got)}: expected a prefix of ${JSON.stringify(wanted)}, then at most one 4xx`);
  } else if (matched < wanted.length) problems.push(`answers ${JSON.stringify(got)}: expected ${JSON.stringify(wanted)} first`);
  else if (!expectation.excluded) {
    const allowed = expectation.refusal === "none" ? 0 : 1;
    if (rest.length > allowed || !rest.every(is4xx) || (expectation.refusal === "required" && rest.length === 0)) {
      problems.push(`answers ${JSON.stringify(got)}: after ${JSON.stringify(wanted)} expected ${expectation.refusal === "required" ? "one 4xx" : expectation.refusal === "optional" ? "at most one 4xx" : "nothing"}`);
    }
  }
  if (!expectation.excluded && !(garbled && result.malformed) && expectation.closes !== result.closedByPeer) problems.push(expectation.closes ? "the proxy did not close the connection" : "the proxy closed a connection the client kept open");
  // What reached the upstream. Not in order: today each request of a pipeline goes up on a
  // connection of its own, and one whose body is still coming arrives after those behind it.
  const unmatched = [...activity.requests];
  for (const outcome of expectation.outcomes) {
    if (outcome.kind !== "forwarded") continue;
    const allowed = outcome.complete && !cutShort ? "whole" : outcome.complete ? "either" : "beginning";
    const sameHead = unmatched.filter((actual) => headDifference(actual, outcome.head, upstreamAuthority) === undefined);
    const match = sameHead.find((actual) => bodyDifference(actual, outcome.head.body, allowed) === undefined) ?? sameHead[0];
    if (match !== undefined) {
      unmatched.splice(unmatched.indexOf(match), 1);
      const difference = bodyDifference(match, outcome.head.body, allowed);
      if (difference !== undefined) problems.push(`upstream, ${outcome.method} ${outcome.head.url}: ${difference}`);
    } else if (allowed === "whole") {
      // Cut short, a request may be missing; a whole one may not. Show the nearest miss.
      const nearest = unmatched.find((actual) => actual.method === outcome.method && actual.url === outcome.head.url) ?? unmatched[0];
      problems.push(`upstream: ${outcome.method} ${outcome.head.url} never arrived${nearest ? ` (${headDifference(nearest, outcome.head, upstreamAuthority)})` : ""}`);
    }
  }
  if (unmatched.length > 0 && !expectation.excluded && !expectation.defects.has("parsesOn")) {
    problems.push(`upstream got requests nobody may forward: ${unmatched.map((request) => JSON.stringify(`${request.method} ${request.url}`)).join(", ")}`);
  }
  if (hanging > 0 && !mayHang) problems.push(`${hanging} upstream connection(s) left waiting for a request`);
  return problems;
}

function headDifference(actual: RecordedRequest, expected: ExpectedHead, upstreamAuthority: string): string | undefined {
  if (actual.method !== expected.method || actual.url !== expected.url) return `request line ${JSON.stringify(`${actual.method} ${actual.url}`)}, expected ${JSON.stringify(`${expected.method} ${expected.url}`)}`;
  const hosts: string[] = [];
  const headers: Array<[string, string]> = [];
  for (let index = 0; index < actual.rawHeaders.length; index += 2) {
    const name = actual.rawHeaders[index]!.toLowerCase();
    if (name === "host") hosts.push(actual.rawHeaders[index + 1]!);
    else if (!FRAMING.has(name)) headers.push([name, actual.rawHeaders[index + 1]!]);
  }
  const hostOk = expected.host !== undefined ? hosts.length === 1 && hosts[0] === expected.host : hosts.length === 0 || (hosts.length === 1 && hosts[0] === upstreamAuthority);
  if (!hostOk) return `Host ${JSON.stringify(hosts)}, expected ${JSON.stringify(expected.host ?? `none or ${upstreamAuthority}`)}`;
  if (JSON.stringify(headers) !== JSON.stringify(expected.headers)) return `headers ${JSON.stringify(headers)}, expected ${JSON.stringify(expected.headers)}`;
  return undefined;
}

/** "whole": the complete body; "beginning": an unfinished request with a prefix of it; "either". */
function bodyDifference(actual: RecordedRequest, expected: Buffer, allowed: "whole" | "beginning" | "either"): string | undefined {
  const body = Buffer.concat(actual.body);
  if (allowed !== "beginning" && actual.complete && body.equals(expected)) return undefined;
  if (allowed !== "whole" && !actual.complete && expected.subarray(0, body.length).equals(body)) return undefined;
  const wanted = allowed === "whole" ? "the whole" : allowed === "beginning" ? "an unfinished request with a beginning of" : "the whole or a beginning of";
  return `body ${JSON.stringify(body.toString("latin1"))} (${actual.complete ? "complete" : "unfinished"}), expected ${wanted} ${JSON.stringify(expected.toString("latin1"))}`;
}
