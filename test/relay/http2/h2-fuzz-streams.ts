// The h2 frame fuzz's streams: a request generated from parts, hostile ones among them, and what the contract (§13, RFC 9113 §8) lets the proxy forward of it to an HTTP/1.1 app.
import fc from "fast-check";
import { authorityIsValid } from "../../../src/http/authority.js";
import type { FieldForm, HeaderField } from "./h2-frames.js";
import { applyTweak, tweak, type Draft, type Tweak } from "./h2-fuzz-tweaks.js";

/**
 * What may become of a stream. `plain`: well-formed and finished, so it must reach the app whole,
 * exactly as modelled, and be answered 200. `forward`: it may reach the app (nghttp2 or the
 * client's reset decides), and if it does, exactly as modelled. `cut`: it may reach the app, but
 * never whole (reset or never ended by the client, a body that disagrees with its
 * content-length, malformed trailers). `never`: refused as malformed, or answered by the proxy
 * itself; nothing of it reaches the app.
 */
export type Fate = "plain" | "forward" | "cut" | "never";

/** A field of the request as the model sees it: whether the proxy must pass it, may, or must not. */
export interface ModelField {
  readonly name: string;
  readonly value: string;
  /** `kept`: reaches the app as sent. `maybe`: nghttp2 may drop it; if not, as sent (its ends' whitespace aside). */
  readonly role: "kept" | "maybe";
}

/** One stream's request as generated: pseudo-headers and fields in order (hostile ones included), body, ending. */
export interface StreamSpec {
  readonly fields: HeaderField[];
  /** The DATA frames' payloads. */
  readonly body: Buffer[];
  /** END_STREAM on HEADERS: no DATA follows. */
  readonly endsWithHeaders: boolean;
  readonly trailers: "none" | "good" | "pseudo" | "no-end-stream";
  readonly ending: "ends" | "reset-before-end" | "reset-after-end" | "open";
  readonly fate: Fate;
  /** Its DATA goes past its content-length (a stream error, by RFC 9113 §8.1.1). */
  readonly overflows: boolean;
  /** Why it is not plain, for failure messages. */
  readonly why: string;
  /** The tweaks applied, for the run's summary. */
  readonly notes: readonly string[];
  /** What reaches the app if it is forwarded. */
  readonly expected: ExpectedRequest;
}

export interface ExpectedRequest {
  readonly method: string;
  readonly target: string;
  readonly host: string;
  /** The fields that are neither pseudo, nor hop-by-hop, nor rewritten by the proxy. */
  readonly fields: readonly ModelField[];
  readonly cookie: string | undefined;
  readonly forwardedFor: string;
  readonly forwardedProto: string;
  readonly forwardedHost: string;
  readonly contentLength: string | undefined;
  readonly chunked: boolean;
  readonly body: Buffer;
}

/** The marker field every stream carries, so that what reaches the app can be told apart. */
export const MARKER = "x-fuzz-id";
/** Methods llhttp knows (the app's parser): anything else is a token it refuses, though HTTP/1.1 allows it. */
const SAFE_METHODS = ["GET", "GET", "POST", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"];
/** Names the proxy rewrites or drops (or nghttp2 refuses): the random fields avoid them; tweaks add them on purpose. */
const SPECIAL = new Set(["host", "cookie", "content-length", "x-forwarded-for", "x-forwarded-proto", "x-forwarded-host", "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade", "expect", "http2-settings", "content-type", MARKER]);
/** The listener's header-list limit, counted as nghttp2 and the listener count it (RFC 9113 §6.5.2). */
const LIST_LIMIT = 16 * 1024;

const cleanValue = fc.oneof(
  { weight: 8, arbitrary: fc.stringMatching(/^[\x21-\x7e]([\x20-\x7e]{0,20}[\x21-\x7e])?$/) },
  { weight: 1, arbitrary: fc.constantFrom("", "a b", "1, 2", '"q"', "a\tb") },
);
const fieldName = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom("accept", "user-agent", "x-a", "x-b", "via", "authorization", "cache-control", "accept-encoding", "x-request-id") },
  { weight: 1, arbitrary: fc.stringMatching(/^[a-z0-9!#$%&'*+.^_`|~-]{1,12}$/).filter((name) => !SPECIAL.has(name)) },
);
const pathSegment = fc.stringMatching(/^([A-Za-z0-9._~!$&'()*+,;=:@-]|%[0-9A-Fa-f]{2}){0,8}$/);
const originForm = fc
  .tuple(fc.array(pathSegment, { minLength: 1, maxLength: 3 }), fc.option(fc.stringMatching(/^[A-Za-z0-9=&%+/?._-]{0,12}$/), { freq: 3 }))
  .map(([segments, query]) => `/${segments.join("/")}${query === null ? "" : `?${query}`}`);
const authority = fc.constantFrom("app.example", "app.example:8443", "[::1]:80", "a", "svc.ns.svc.cluster.local");
const bodyPiece = fc.oneof(fc.stringMatching(/^[a-z0-9 ]{0,30}$/).map((text) => Buffer.from(text)), fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes)));

/** The parts a stream is built from. */
export const streamParts = fc.record({
  method: fc.constantFrom(...SAFE_METHODS),
  path: originForm,
  authority,
  fields: fc.array(fc.tuple(fieldName, cleanValue), { maxLength: 5 }),
  markerAt: fc.nat(),
  tweaks: fc.oneof({ weight: 3, arbitrary: fc.constant([] as Tweak[]) }, { weight: 4, arbitrary: fc.array(tweak, { minLength: 1, maxLength: 2 }) }),
  body: fc.option(fc.array(bodyPiece, { maxLength: 3 }), { freq: 2 }),
  contentLength: fc.constantFrom("none", "none", "right", "right", "more", "less"),
  trailers: fc.constantFrom("none", "none", "none", "none", "good", "pseudo", "no-end-stream"),
  ending: fc.constantFrom("ends", "ends", "ends", "ends", "ends", "ends", "reset-before-end", "reset-after-end", "open"),
  forms: fc.array(fc.constantFrom<FieldForm>("indexed", "literal", "indexed-name", "never"), { minLength: 1, maxLength: 4 }),
});
export type StreamParts = typeof streamParts extends fc.Arbitrary<infer T> ? T : never;

const TOKEN_NAME = /^[!#$%&'*+\-.^_`|~0-9a-z]+$/;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const VISIBLE = /^[\x21-\x7e]+$/;
const CONNECTION_SPECIFIC = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"]);
const PSEUDO = new Set([":method", ":scheme", ":authority", ":path"]);

/**
 * The finished draft's verdict: `never` reasons (malformed, or the proxy's own to answer),
 * `forward` reasons (valid, but nghttp2 or the app may take it differently), in that order.
 */
function judge(draft: Draft): { never: string[]; unsure: string[] } {
  const never: string[] = [];
  const unsure: string[] = [];
  const count = (name: string) => draft.pseudo.filter((field) => field.name === name).length;
  const value = (name: string) => draft.pseudo.find((field) => field.name === name)?.value;
  for (const name of [":method", ":scheme", ":path"]) if (count(name) !== 1) never.push(`${count(name)} ${name}`);
  if (count(":authority") > 1) never.push("two :authority");
  if (draft.pseudo.some((field) => !PSEUDO.has(field.name))) never.push("an unknown pseudo-header");
  if (draft.regular.some((field) => field.name.startsWith(":"))) never.push("a pseudo-header after a field");
  const method = value(":method") ?? "";
  const scheme = value(":scheme") ?? "";
  const path = value(":path") ?? "";
  const authority = value(":authority");
  if (!TOKEN.test(method)) never.push(`:method ${JSON.stringify(method)}`);
  // A :scheme must be a URI scheme (RFC 3986 §3.1); "/other" is what missing-pseudo then duplicate-pseudo can leave.
  if (count(":scheme") === 1 && !/^[A-Za-z][A-Za-z0-9+.-]*$/.test(scheme)) never.push(`:scheme ${JSON.stringify(scheme)}`);
  if (!VISIBLE.test(path)) never.push(`:path ${JSON.stringify(path)}`);
  else if (!path.startsWith("/")) never.push(`:path ${JSON.stringify(path)}, not origin-form`);
  if (authority !== undefined && !/^[\x21-\x7e]*$/.test(authority)) never.push(`:authority ${JSON.stringify(authority)}`);
  // The one authority rule (src/http/authority.ts): our listener refuses the stream (an empty one stays unsure: it may read as absent).
  else if (authority !== undefined && authority !== "" && !authorityIsValid(authority)) never.push(`:authority ${JSON.stringify(authority)} fails the authority rule`);
  else if (authority !== undefined && !/^[A-Za-z0-9.:[\]-]+$/.test(authority)) unsure.push(`:authority ${JSON.stringify(authority)}`);
  const kept = draft.regular.filter((field) => field.role !== "dropped");
  const named = (name: string) => kept.filter((field) => field.name === name);
  if (kept.some((field) => /[A-Z]/.test(field.name))) never.push("an uppercase name");
  if (kept.some((field) => CONNECTION_SPECIFIC.has(field.name))) never.push("a connection-specific field");
  if (named("te").some((field) => field.value.toLowerCase() !== "trailers")) never.push("te other than trailers");
  if (named("host").length > 1) never.push("two host fields");
  if (authority === undefined && named("host").length === 0) never.push("no :authority, no host");
  if (authority === undefined && named("host").length === 1) unsure.push("host instead of :authority");
  if (authority !== undefined && named("host").length === 1) unsure.push("host beside :authority");
  const lengths = named("content-length");
  if (lengths.length > 1 || lengths.some((field) => !/^\d+$/.test(field.value))) never.push("a content-length nghttp2 cannot read");
  if (named("content-type").some((field) => /^application\/grpc/.test(field.value))) never.push("gRPC to an HTTP/1.1 app: the proxy's own error");
  if ((method === "GET" || method === "HEAD") && /^\/(health|healthz|readyz)(\?|$)/.test(path)) never.push("a health path: the proxy's own answer");
  if ((method === "GET" || method === "HEAD") && path.startsWith("/readyz/")) unsure.push("a single check's path");
  if (!SAFE_METHODS.includes(method) && TOKEN.test(method)) unsure.push(`method ${method}: llhttp (the app's parser) knows only its own list`);
  if (draft.regular.some((field) => field.role === "dropped")) unsure.push("a field nghttp2 drops");
  if (draft.regular.some((field) => field.role === "maybe")) unsure.push("a field nghttp2 may drop");
  if (kept.some((field) => field.role === "kept" && !TOKEN_NAME.test(field.name))) unsure.push("an odd name");
  return { never, unsure };
}

/** Builds a stream's fields and its fate from its parts; `marker` is the value of its MARKER field. */
export function buildStream(spec: StreamParts, marker: string): StreamSpec {
  const draft: Draft = {
    pseudo: [
      { name: ":method", value: spec.method },
      { name: ":scheme", value: "http" },
      { name: ":authority", value: spec.authority },
      { name: ":path", value: spec.path },
    ],
    regular: spec.fields.map(([name, value]) => ({ name, value, role: "kept" as const })),
    notes: [],
  };
  draft.regular.splice(spec.markerAt % (draft.regular.length + 1), 0, { name: MARKER, value: marker, role: "kept" });
  for (const each of spec.tweaks) applyTweak(draft, each);
  const body = spec.body;
  const bodyBytes = Buffer.concat(body ?? []);
  let contentLength: string | undefined = draft.regular.find((field) => field.name === "content-length" && field.role !== "dropped")?.value;
  if (contentLength === undefined && spec.contentLength !== "none") {
    const declared = spec.contentLength === "right" ? bodyBytes.length : spec.contentLength === "more" ? bodyBytes.length + 1 : bodyBytes.length - 1;
    if (declared >= 0) {
      contentLength = String(declared);
      draft.regular.push({ name: "content-length", value: contentLength, role: "kept" });
    }
  }
  const fields: HeaderField[] = [...draft.pseudo, ...draft.regular].map((field, index) => ({ name: field.name, value: field.value, form: spec.forms[index % spec.forms.length]! }));
  const { never, unsure } = judge(draft);
  // The header list as nghttp2 and the listener count it: name + value + 32 for each field it keeps.
  const listBytes = [...draft.pseudo, ...draft.regular.filter((field) => field.role !== "dropped")].reduce((sum, field) => sum + field.name.length + field.value.length + 32, 0);
  if (listBytes > LIST_LIMIT) never.push(`a header list of ${listBytes} bytes`);
  else if (listBytes > LIST_LIMIT - 1024) unsure.push(`a header list of ${listBytes} bytes, near the limit`);
  if (draft.pseudo.length + draft.regular.length > 120) never.push(`${draft.pseudo.length + draft.regular.length} fields`);
  // The client's END_STREAM comes with HEADERS: a request without a body (not even an empty one).
  const endsWithHeaders = body === null && (spec.ending === "ends" || spec.ending === "reset-after-end");
  const trailers = body === null || spec.ending === "reset-before-end" || spec.ending === "open" ? "none" : spec.trailers;
  const cut = [
    ...(spec.ending === "reset-before-end" || spec.ending === "open" ? [`ending ${spec.ending}`] : []),
    ...(contentLength !== undefined && /^\d+$/.test(contentLength) && Number(contentLength) !== bodyBytes.length ? [`content-length ${contentLength} for ${bodyBytes.length} bytes`] : []),
    ...(trailers === "pseudo" || trailers === "no-end-stream" ? [`trailers ${trailers}`] : []),
  ];
  if (spec.ending === "reset-after-end") unsure.push("reset after its end");
  const fate: Fate = never.length > 0 ? "never" : cut.length > 0 ? "cut" : unsure.length > 0 ? "forward" : "plain";
  const why = [...never, ...cut, ...unsure].join("; ") || "plain";
  const value = (name: string) => draft.pseudo.find((field) => field.name === name)?.value;
  const named = (name: string) => draft.regular.filter((field) => field.name === name && field.role !== "dropped").map((field) => field.value);
  const host = value(":authority") ?? named("host")[0] ?? "";
  const cookies = named("cookie");
  const expected: ExpectedRequest = {
    method: value(":method") ?? "",
    target: value(":path") ?? "",
    host,
    fields: draft.regular.filter((field) => field.role !== "dropped" && (!SPECIAL.has(field.name) || field.name === MARKER)).map(({ name, value, role }) => ({ name, value, role: role === "maybe" ? "maybe" : "kept" })),
    cookie: cookies.length > 0 ? cookies.join("; ") : undefined,
    forwardedFor: [...named("x-forwarded-for"), "127.0.0.1"].join(", "),
    forwardedProto: [...named("x-forwarded-proto"), "http"].join(", "),
    forwardedHost: [...named("x-forwarded-host"), host].join(", "),
    contentLength,
    chunked: contentLength === undefined && !endsWithHeaders,
    body: bodyBytes,
  };
  const overflows = contentLength !== undefined && /^\d+$/.test(contentLength) && Number(contentLength) < bodyBytes.length;
  return { fields, body: body ?? [], endsWithHeaders, trailers, ending: spec.ending, fate, overflows, why, notes: draft.notes, expected };
}
