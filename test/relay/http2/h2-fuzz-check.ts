// The h2 frame fuzz's property: what reached the app is strict HTTP/1.1, each request one the client sent validly and as the model says, and well-formed streams were answered.
import type { BuiltConnection, BuiltStream, Walk } from "./h2-fuzz-connection.js";
import { MARKER } from "./h2-fuzz-streams.js";
import type { ClientView } from "./h2-raw-client.js";
import type { StrictReading, StrictRequest } from "./strict-h1-requests.js";

/** Never forwarded to an HTTP/1.1 app (CONTRACT §5); `transfer-encoding` is the proxy's own framing, checked by the reader. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "te", "trailer", "upgrade", "expect", "http2-settings"]);
/** Written by the proxy itself, compared apart from the client's fields. */
const REWRITTEN = new Set(["host", "cookie", "content-length", "transfer-encoding", "x-forwarded-for", "x-forwarded-proto", "x-forwarded-host"]);

const valuesOf = (request: StrictRequest, name: string) => request.fields.filter(([field]) => field.toLowerCase() === name).map(([, value]) => value);
const trimmed = (value: string) => value.replace(/^[ \t]+|[ \t]+$/g, "");

/** A request in a line, for failure messages. */
export function showRequest(request: StrictRequest): string {
  const body = request.body.toString("latin1");
  return JSON.stringify({ head: `${request.method} ${request.target}`, fields: request.fields, body: body.length > 80 ? `${body.slice(0, 80)}…` : body, complete: request.complete });
}

/** What holds for every request the proxy makes, whatever the client sent (mutated bytes too). */
function framingProblems(request: StrictRequest): string[] {
  const problems: string[] = [];
  for (const [name] of request.fields) {
    if (name !== name.toLowerCase()) problems.push(`a field name not in lower case (nghttp2 refuses those): ${name}`);
    if (HOP_BY_HOP.has(name.toLowerCase())) problems.push(`a hop-by-hop field reached the app: ${name}`);
  }
  const forwardedFor = valuesOf(request, "x-forwarded-for");
  const forwardedProto = valuesOf(request, "x-forwarded-proto");
  if (forwardedFor.length !== 1 || !/(^|, )127\.0\.0\.1$/.test(forwardedFor[0]!)) problems.push(`x-forwarded-for ${JSON.stringify(forwardedFor)}: not one, ending in the client's address`);
  if (forwardedProto.length !== 1 || !/(^|, )http$/.test(forwardedProto[0]!)) problems.push(`x-forwarded-proto ${JSON.stringify(forwardedProto)}: not one, ending in http`);
  return problems.map((problem) => `${problem}, in ${showRequest(request)}`);
}

/** A request that reached the app against the stream it came from. */
function comparison(stream: BuiltStream, request: StrictRequest): string[] {
  const expected = stream.expected;
  const problems: string[] = [];
  if (stream.fate === "never") return [`stream ${stream.id} must never reach the app (${stream.why}), but did: ${showRequest(request)}`];
  if (stream.fate === "cut" && request.complete) problems.push(`stream ${stream.id} reached the app whole, but must not (${stream.why})`);
  if (request.method !== expected.method) problems.push(`method ${JSON.stringify(request.method)}, sent ${JSON.stringify(expected.method)}`);
  if (request.target !== expected.target) problems.push(`target ${JSON.stringify(request.target)}, sent :path ${JSON.stringify(expected.target)}`);
  const host = valuesOf(request, "host");
  if (host.length !== 1 || host[0] !== expected.host) problems.push(`host ${JSON.stringify(host)}, sent ${JSON.stringify(expected.host)}`);
  const got = request.fields.filter(([name]) => !REWRITTEN.has(name.toLowerCase()));
  let next = 0;
  for (const field of expected.fields) {
    const candidate = got[next];
    if (candidate !== undefined && candidate[0] === field.name && candidate[1] === trimmed(field.value)) next++;
    else if (field.role === "kept") problems.push(`${field.name}: ${JSON.stringify(field.value)} did not reach the app as sent (next: ${JSON.stringify(candidate)})`);
  }
  if (next < got.length) problems.push(`fields the client did not send (or not so): ${JSON.stringify(got.slice(next))}`);
  const cookie = valuesOf(request, "cookie");
  if (JSON.stringify(cookie) !== JSON.stringify(expected.cookie === undefined ? [] : [expected.cookie])) problems.push(`cookie ${JSON.stringify(cookie)}, sent ${JSON.stringify(expected.cookie)}`);
  for (const [name, value] of [["x-forwarded-for", expected.forwardedFor], ["x-forwarded-proto", expected.forwardedProto], ["x-forwarded-host", expected.forwardedHost]] as const) {
    if (JSON.stringify(valuesOf(request, name)) !== JSON.stringify([value])) problems.push(`${name} ${JSON.stringify(valuesOf(request, name))}, expected ${JSON.stringify(value)}`);
  }
  const framing = expected.contentLength !== undefined ? "length" : expected.chunked ? "chunked" : "none";
  if (request.framing !== framing || (framing === "length" && valuesOf(request, "content-length")[0] !== expected.contentLength)) {
    problems.push(`framed ${request.framing} (content-length ${JSON.stringify(valuesOf(request, "content-length"))}), expected ${framing} (${JSON.stringify(expected.contentLength)})`);
  }
  const body = request.body.toString("latin1");
  const sent = expected.body.toString("latin1");
  if (request.complete ? body !== sent : !sent.startsWith(body)) problems.push(`body ${JSON.stringify(body)}${request.complete ? "" : " (so far)"}, sent ${JSON.stringify(sent)}`);
  return problems.map((problem) => `stream ${stream.id}: ${problem}`);
}

/**
 * Every disagreement between what the client sent (`built`, `walk`), what it got back
 * (`client`) and what the app read on each of its connections (`readings`). Mutated bytes are
 * held to what holds for any input: strict HTTP/1.1, no more requests than HEADERS frames, no
 * more body than DATA, and the proxy's own fields; the rest to the model, exactly.
 * `connectionCut`: the connection ended early through no fault of the proxy's (a known runtime
 * defect), so well-formed streams need not have been answered, only never be wrong.
 */
export function disagreements(built: BuiltConnection, walk: Walk, client: ClientView, readings: readonly StrictReading[], connectionCut = false): string[] {
  const problems: string[] = [];
  for (const reading of readings) if (reading.error !== undefined) problems.push(`the app got bytes that are not HTTP/1.1 requests: ${reading.error}`);
  const requests = readings.flatMap((reading) => reading.requests).filter((request) => request.method !== "");
  if (requests.length > walk.headers) problems.push(`${requests.length} requests reached the app for ${walk.headers} HEADERS frames`);
  const bodyBytes = requests.reduce((sum, request) => sum + request.body.length, 0);
  if (bodyBytes > walk.dataBytes) problems.push(`${bodyBytes} body bytes reached the app for ${walk.dataBytes} bytes of DATA`);
  const byMarker = new Map(built.streams.map((stream) => [stream.marker, stream]));
  const arrived = new Map<BuiltStream, StrictRequest>();
  for (const request of requests) {
    problems.push(...framingProblems(request));
    const markers = valuesOf(request, MARKER);
    const stream = markers.length === 1 ? byMarker.get(markers[0]!) : undefined;
    if (stream === undefined) {
      if (!built.mutated) problems.push(`a request the client did not send: ${showRequest(request)}`);
      continue;
    }
    // Mutated bytes may carry a stream's header block twice (a frame duplicated onto another id).
    if (built.mutated) continue;
    if (arrived.has(stream)) problems.push(`stream ${stream.id} reached the app twice`);
    arrived.set(stream, request);
    problems.push(...comparison(stream, request));
  }
  if (built.mutated || connectionCut) return problems;
  for (const stream of built.streams) {
    if (stream.fate !== "plain") continue;
    const request = arrived.get(stream);
    if (request === undefined || !request.complete) problems.push(`stream ${stream.id} is well-formed and finished, but ${request === undefined ? "never reached the app" : "reached it cut short"}`);
    const answer = client.streams.get(stream.id);
    const data = Buffer.concat(answer?.data ?? []).toString("latin1");
    const body = stream.expected.method === "HEAD" ? "" : stream.expected.target;
    if (answer?.status !== 200 || !answer.ended || data !== body) problems.push(`stream ${stream.id} is well-formed and finished, but its answer was ${JSON.stringify({ ...answer, data })}, not 200 with ${JSON.stringify(body)}`);
  }
  return problems;
}
