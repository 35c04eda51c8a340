// The upstream differential's verdict on one case: what reached the codec's user that nghttp2 kept from its own, or that is malformed whatever nghttp2 did (failures), and the other differences by class (counted).
import { FRAME } from "../relay/http2/h2-frames.js";
import type { Answer } from "./session-client.js";
import { codeName, connectionLeniencies, type SessionVerdicts } from "./session-compare.js";
import type { Mutation } from "./session-mutations.js";
import type { FrameSpec } from "./session-script.js";
import type { UserRecord, UserStream } from "./upstream-clients.js";
import type { Method } from "./upstream-script.js";
import { deliveredProblem } from "./upstream-validity.js";

/** One client's side of a case: what it sent back to the app, and what its user got. */
export interface ClientOutcome {
  readonly wire: Answer;
  readonly user: UserRecord;
}

const PROTOCOL_ERROR = 1;
const EXTENSION_FRAMES = new Set([0x0a, 0x0c, 0x10]);
const printable = (value: unknown) => JSON.stringify(value).slice(0, 300);
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Where nghttp2's client (or node:http2 around it) ends the connection and the codec, on purpose,
 * ends a stream or nothing: then what the codec's user got after that point is counted, not failed.
 */
function upstreamLeniencies(frames: readonly FrameSpec[], codec: Answer, node: Answer): string[] {
  const reasons: string[] = [];
  // Extensions node:http2's client takes: ALTSVC (RFC 7838), ORIGIN (RFC 8336), PRIORITY_UPDATE (RFC 9218 §7.1: a connection error from a server); nghttp2 ends the connection on a malformed one, the codec ignores the types as unknown (RFC 9113 §5.5).
  if (frames.some((f) => EXTENSION_FRAMES.has(f.type))) reasons.push("an ALTSVC, ORIGIN or PRIORITY_UPDATE frame (extensions nghttp2 takes)");
  // RFC 9113 §8.1.1: a malformed response (DATA past its content-length, content on a HEAD's) is a stream error; nghttp2 makes
  // some connection errors, and node:http2 fails its callback on others (its session then hands its user nothing more, whatever
  // GOAWAY follows): the codec, which reset that stream alone, goes on with the others.
  if (codec.resets.size > 0 && [...codec.resets].every(([id, codes]) => codes[0] === PROTOCOL_ERROR && !node.resets.has(id))) reasons.push("a malformed response the codec reset alone (nghttp2 ended the connection)");
  // RFC 9113 §6.8: the streams at or below the last id may still complete; node:http2 destroys the session on a GOAWAY with an error.
  if (frames.some((f) => f.type === FRAME.GOAWAY && f.streamId === 0 && f.payload.length === 8 && f.payload.readUInt32BE(4) !== 0)) reasons.push("the app's GOAWAY with an error (node:http2 destroys the session)");
  // RFC 9113 §8.1.1: DATA before the response's HEADERS is a malformed response (a stream error); nghttp2 makes it a connection error.
  const headed = new Set<number>();
  for (const f of frames) {
    if (f.type === FRAME.HEADERS) headed.add(f.streamId);
    else if (f.type === FRAME.DATA && f.streamId !== 0 && !headed.has(f.streamId)) {
      reasons.push("DATA before the response's HEADERS");
      break;
    }
  }
  return reasons;
}

/** nghttp2 drops a 204's `content-length: 0` from the list (a workaround for servers that send it, lib/nghttp2_http.c); the codec passes it on. */
function only204ContentLengthZero(ours: readonly string[], theirs: readonly string[]): boolean {
  if (ours[1] !== "204") return false;
  const without: string[] = [];
  for (let i = 0; i < ours.length; i += 2) if (!(ours[i] === "content-length" && ours[i + 1] === "0")) without.push(ours[i] as string, ours[i + 1] as string);
  return same(without, theirs);
}

/**
 * Compares one stream: `more` gets what the codec's user got beyond nghttp2's (a failure unless
 * nghttp2 ended the connection for a reason the codec does not take as one), `failures` what no
 * connection error explains (a different list where both got one), `differences` the rest.
 */
function diffStream(id: number, ours: UserStream, theirs: UserStream, more: string[], failures: string[], differences: string[]): void {
  const interimCount = Math.min(ours.interim.length, theirs.interim.length);
  for (let i = 0; i < interimCount; i++) if (!same(ours.interim[i], theirs.interim[i])) failures.push(`stream ${id}: different 1xx heads: codec ${printable(ours.interim[i])}, nghttp2 ${printable(theirs.interim[i])}`);
  if (ours.interim.length > theirs.interim.length) more.push(`stream ${id}: a 1xx head nghttp2 kept from its user: ${printable(ours.interim[interimCount])}`);
  else if (ours.interim.length < theirs.interim.length) differences.push("nghttp2's user got a 1xx head the codec's did not");
  if (ours.head !== undefined && theirs.head === undefined) more.push(`stream ${id}: a response nghttp2 kept from its user: ${printable(ours.head)}`);
  else if (ours.head === undefined && theirs.head !== undefined) differences.push("nghttp2's user got a response the codec refused");
  else if (ours.head === undefined || theirs.head === undefined || same(ours.head, theirs.head)) {
    // the same list, or neither got one
  } else if (only204ContentLengthZero(ours.head, theirs.head)) differences.push("a 204's content-length: 0 kept by the codec, dropped by nghttp2");
  else failures.push(`stream ${id}: different header lists: codec ${printable(ours.head)}, nghttp2 ${printable(theirs.head)}`);
  const ourBody = Buffer.concat(ours.body);
  const theirBody = Buffer.concat(theirs.body);
  const common = Math.min(ourBody.length, theirBody.length);
  if (!ourBody.subarray(0, common).equals(theirBody.subarray(0, common))) failures.push(`stream ${id}: different body octets`);
  if (ourBody.length > theirBody.length || (ours.ended && !theirs.ended)) more.push(`stream ${id}: more of the body: ${ourBody.length} octets${ours.ended ? " and the end" : ""}, nghttp2's ${theirBody.length}${theirs.ended ? " and the end" : ""}`);
  else if (ourBody.length < theirBody.length || ours.ended !== theirs.ended) differences.push(`nghttp2's user got more of a body (${theirs.ended ? "ended" : "not ended"}) than the codec's (${ours.ended ? "ended" : "not ended"})`);
  if (ours.trailers !== undefined && theirs.trailers === undefined) more.push(`stream ${id}: trailers nghttp2 kept from its user: ${printable(ours.trailers)}`);
  else if (ours.trailers === undefined && theirs.trailers !== undefined) differences.push("nghttp2's user got trailers the codec refused");
  else if (ours.trailers !== undefined && !same(ours.trailers, theirs.trailers)) failures.push(`stream ${id}: different trailers: codec ${printable(ours.trailers)}, nghttp2 ${printable(theirs.trailers)}`);
  if (ours.reset !== theirs.reset) differences.push(`the user's reset: nghttp2 ${codeName(theirs.reset)}, codec ${codeName(ours.reset)}`);
}

/**
 * Compares one case. Failures: anything the codec's user got that nghttp2's did not (bar the
 * connection leniencies of the session differential), a different list or body where both got
 * one, anything malformed the codec delivered, a fault of ours, and any difference at user level
 * in a session without mutations. Everything else is a class, counted.
 */
export function diffUpstreamCase(list: readonly Mutation[], frames: readonly FrameSpec[], methods: readonly Method[], codec: ClientOutcome, node: ClientOutcome, verdicts: SessionVerdicts): string[] {
  const failures: string[] = codec.user.faults.map((fault) => `the codec's handler faulted: ${fault}`);
  const differences: string[] = [];
  const more: string[] = [];
  const userDifferencesBefore = () => more.length + differences.filter((d) => !d.startsWith("wire")).length;
  for (const [id, ours] of codec.user.streams) {
    const method = methods[(id - 1) / 2] as Method;
    const problem = deliveredProblem(ours, method);
    if (problem !== undefined) failures.push(`stream ${id}: the codec delivered a malformed response (${problem}): ${printable({ interim: ours.interim, head: ours.head, octets: Buffer.concat(ours.body).length, ended: ours.ended, trailers: ours.trailers })}`);
    diffStream(id, ours, node.user.streams.get(id) as UserStream, more, failures, differences);
    const ourReset = codec.wire.resets.get(id)?.[0];
    const theirReset = node.wire.resets.get(id)?.[0];
    if (ourReset !== theirReset) differences.push(`wire: RST_STREAM: nghttp2 ${codeName(theirReset)}, codec ${codeName(ourReset)}`);
  }
  const userDiffers = userDifferencesBefore() > 0;
  const nodeFailed = (node.wire.goaway !== undefined && node.wire.goaway !== 0) || node.user.closed === "error";
  const lenient = nodeFailed ? [...connectionLeniencies(frames, node.wire), ...upstreamLeniencies(frames, codec.wire, node.wire)] : [];
  if (lenient.length === 0) failures.push(...more);
  else if (more.length > 0) differences.push(`the codec's user got more after ${lenient.join(", ")}`);
  if (codec.user.goaway !== node.user.goaway) differences.push(`the user's GOAWAY: nghttp2 ${codeName(node.user.goaway)}, codec ${codeName(codec.user.goaway)}`);
  if (codec.user.closed !== node.user.closed) differences.push(`the user heard the close: nghttp2 ${node.user.closed ?? "no"}, codec ${codec.user.closed ?? "no"}`);
  if (codec.wire.goaway !== node.wire.goaway) differences.push(`wire: GOAWAY: nghttp2 ${codeName(node.wire.goaway)}, codec ${codeName(codec.wire.goaway)}`);
  if (codec.wire.end !== node.wire.end) differences.push(`wire: the case ended: nghttp2 ${node.wire.end}, codec ${codec.wire.end}`);
  if (list.length === 0 && userDiffers) failures.push(`an unmutated session reached the two users differently: ${differences.filter((d) => !d.startsWith("wire")).join("; ")}`);
  if (!userDiffers) {
    verdicts.agreed++;
    if (list.length === 0) verdicts.agreedValid++;
    const refused = (c: ClientOutcome) => [...c.wire.resets.values()].some((codes) => codes.some((code) => code !== 8)) || (c.wire.goaway ?? 0) !== 0;
    if (refused(codec) && refused(node)) verdicts.refusedByBoth++;
  }
  const label = list.length === 0 ? "valid" : [...new Set(list.map((m) => m.kind))].sort().join(" + ");
  for (const difference of new Set(differences)) verdicts.count(difference.startsWith("wire: ") ? difference : `user: ${label}: ${difference}`);
  return failures;
}
