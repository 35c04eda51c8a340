// Valid app sessions for the upstream differential: the client's requests (GET or HEAD), and the app's responses to them (status, fields, 1xx heads, bodies, padding, CONTINUATION splits, trailers) interleaved with control frames.
import fc from "fast-check";
import { control, messageParts, value, type Field, type Request, type Script } from "./session-script.js";

export type Method = "GET" | "HEAD";

/** One case before mutations: what the client asks (stream 2i+1 is `methods[i]`), and the app's answers as a script (its `requests` are the responses). */
export interface UpstreamCase {
  methods: Method[];
  script: Script;
}

const responseName = fc.oneof(fc.constantFrom("content-type", "cache-control", "server", "date", "etag", "set-cookie", "vary", "location", "grpc-status"), fc.stringMatching(/^x-[a-z0-9-]{1,10}$/));
/** Statuses whose responses have content, and the ones that never do (RFC 9110 §6.4.1: 204 and 304). */
const contentStatus = fc.constantFrom("200", "201", "206", "301", "404", "500", "503", "299", "599");
const noContentStatus = fc.constantFrom("204", "304");

const exchange: fc.Arbitrary<{ method: Method; response: Request }> = fc
  .record({
    method: fc.constantFrom<Method>("GET", "GET", "HEAD"),
    status: fc.oneof({ weight: 4, arbitrary: contentStatus }, { weight: 1, arbitrary: noContentStatus }),
    interim: fc.option(fc.array(fc.constantFrom<Field[]>([[":status", "100"]], [[":status", "103"], ["link", "</style.css>; rel=preload"]]), { minLength: 1, maxLength: 2 }), { nil: undefined, freq: 4 }),
    regular: fc.array(fc.tuple(responseName, value), { maxLength: 6 }),
    ...messageParts,
  })
  .map(({ method, status, interim, regular, data, contentLength, trailers, headPieces, headPad, headPriority }) => {
    // A response to HEAD, and a 204 or 304, has no content (RFC 9110 §9.3.2, §6.4.1); a HEAD's content-length is the GET's.
    const noContent = method === "HEAD" || status === "204" || status === "304";
    const body = noContent ? [] : data;
    const fields: Field[] = [[":status", status]];
    // 204 may not carry a content-length (RFC 9110 §8.6); a HEAD's or a 304's says what a GET would have had.
    if (contentLength && status !== "204") fields.push(["content-length", String(noContent ? 1234 : body.reduce((sum, { length }) => sum + length, 0))]);
    const response: Request = { fields: [...fields, ...regular.filter(([name]) => name !== "content-length")], data: body, trailers, headPieces, headPad, headPriority, ends: true };
    if (interim !== undefined) response.interim = interim;
    return { method, response };
  });

/** The app's SETTINGS: the values a server may send (ENABLE_PUSH only as 0: a server that enables push is a connection error, RFC 9113 §6.5.2). */
const setting = fc.oneof(
  fc.tuple(fc.constant(1), fc.constantFrom(0, 256, 4096, 65536)),
  fc.tuple(fc.constant(2), fc.constant(0)),
  fc.tuple(fc.constant(3), fc.constantFrom(0, 1, 100)),
  fc.tuple(fc.constant(4), fc.constantFrom(0, 100, 65535, 1 << 20)),
  fc.tuple(fc.constant(5), fc.constantFrom(16384, 32768, 16777215)),
  fc.tuple(fc.constant(6), fc.constantFrom(1024, 65536)),
  fc.tuple(fc.constant(0x99), fc.nat()),
);

export const upstreamCase: fc.Arbitrary<UpstreamCase> = fc
  .record({
    exchanges: fc.array(exchange, { minLength: 1, maxLength: 3 }),
    settings: fc.array(setting, { maxLength: 3 }),
    order: fc.array(fc.nat(3), { maxLength: 16 }),
    controls: fc.array(control, { maxLength: 4 }),
    hpack: fc.constantFrom<Script["hpack"]>("static", "dynamic"),
    forms: fc.array(fc.constantFrom<Script["forms"][number]>("indexed", "literal", "indexed-name", "never"), { minLength: 1, maxLength: 4 }),
    goawayAtEnd: fc.boolean(),
  })
  .map(({ exchanges, ...rest }) => ({ methods: exchanges.map((e) => e.method), script: { ...rest, requests: exchanges.map((e) => e.response) } }));
