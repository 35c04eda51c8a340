// The session differential's verdict on one case: what the codec let reach the app that nghttp2 kept from it (a failure), and the other differences by class (counted).
import { FLAG, FRAME } from "../relay/http2/h2-frames.js";
import type { Answer } from "./session-client.js";
import type { Mutation } from "./session-mutations.js";
import type { FrameSpec } from "./session-script.js";
import type { AppRecord } from "./session-servers.js";

/** One server's side of a case: the frames the client read, and what its app saw. */
export interface CaseOutcome {
  readonly answer: Answer;
  readonly app: AppRecord;
}

const CODES = ["NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT", "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM"];
/** An error code by its RFC 9113 §7 name. */
export const codeName = (code: number | undefined) => (code === undefined ? "none" : (CODES[code] ?? `0x${code.toString(16)}`));

/** The counts of a run, by class (the mutations of the case, then the difference). */
export class SessionVerdicts {
  agreedValid = 0;
  refusedByBoth = 0;
  agreed = 0;
  readonly classes = new Map<string, number>();

  /** `reader`: who the comparison is about (the app behind the server, or the user of a client). */
  constructor(readonly reader: "app" | "user" = "app") {}

  count(key: string): void {
    this.classes.set(key, (this.classes.get(key) ?? 0) + 1);
  }

  report(): string[] {
    const lines = [`agreed at ${this.reader} level: ${this.agreed} cases (${this.agreedValid} of them unmutated); a refusal by both: ${this.refusedByBoth}`];
    const sorted = [...this.classes].sort(([a], [b]) => a.localeCompare(b));
    for (const [key, count] of sorted) lines.push(`  ${count}\t${key}`);
    return lines;
  }
}

/**
 * Where nghttp2 (or node:http2 around it) ends the connection and the codec, on purpose, does not:
 * then what the codec's app got after that point is counted, not failed. Each names its reason.
 */
export function connectionLeniencies(frames: readonly FrameSpec[], node: Answer): string[] {
  const reasons: string[] = [];
  // node:http2 answers a callback of its own that failed (a header for a stream it has let go) with GOAWAY INTERNAL_ERROR: node's binding, not nghttp2's rule.
  if (node.goaway === 2) reasons.push("node:http2's GOAWAY INTERNAL_ERROR (its callback failed)");
  // node:http2 closes its side on the peer's GOAWAY (NO_ERROR: no new streams; other codes: at once); the codec goes on with the streams the GOAWAY keeps.
  if (frames.some((f) => f.type === FRAME.GOAWAY && f.streamId === 0)) reasons.push("the peer's GOAWAY (node:http2 stops serving or reading)");
  // RFC 9113 §6.9, §6.9.1: an increment of 0 on a stream, or one past 2^31-1, is a stream error; nghttp2 makes both connection errors.
  const increment = (f: FrameSpec) => f.payload.readUInt32BE(0) & 0x7fffffff;
  if (frames.some((f) => f.type === FRAME.WINDOW_UPDATE && f.streamId !== 0 && f.payload.length === 4 && (increment(f) === 0 || increment(f) > 0x7fff0000))) reasons.push("WINDOW_UPDATE 0 or past 2^31-1 on a stream");
  // RFC 9113 §6.5.3 names no error for an ACK nobody asked for; nghttp2 ends the connection.
  if (frames.filter((f) => f.type === FRAME.SETTINGS && (f.flags & FLAG.ACK) !== 0).length > 1) reasons.push("a SETTINGS ACK not asked for");
  // RFC 9113 §5.1: more DATA or HEADERS on a stream the client ended is a stream error STREAM_CLOSED; nghttp2 makes it a connection error.
  if (framesAfterEnd(frames)) reasons.push("a frame after END_STREAM");
  return reasons;
}

/**
 * Both ended the connection with the same error, and nghttp2's GOAWAY says it took the stream
 * (last stream id at or above it) without resetting it: node:http2 tore the session down before
 * its app heard of a head read in the same chunk. nghttp2 did not refuse it.
 */
function lostInTeardown(id: number, codec: Answer, node: Answer): boolean {
  return node.goaway !== undefined && node.goaway !== 0 && node.goaway === codec.goaway && node.goawayLastStreamId >= id && !node.resets.has(id);
}

function framesAfterEnd(frames: readonly FrameSpec[]): boolean {
  const ended = new Set<number>();
  for (const f of frames) {
    if (f.type !== FRAME.DATA && f.type !== FRAME.HEADERS) continue;
    const id = f.streamId & 0x7fffffff;
    if (ended.has(id)) return true;
    if ((f.flags & FLAG.END_STREAM) !== 0) ended.add(id);
  }
  return false;
}

const printable = (list: readonly string[]) => JSON.stringify(list).slice(0, 300);

/**
 * Compares one case. Failures: a stream whose head reached the codec's app and not nghttp2's, a
 * different header list or more body on the codec's side, a fault of ours, and any difference at
 * app level in a session without mutations. Everything else is a class, counted.
 */
export function diffCase(list: readonly Mutation[], frames: readonly FrameSpec[], codec: CaseOutcome, node: CaseOutcome, verdicts: SessionVerdicts): string[] {
  const failures: string[] = [];
  const differences: string[] = [];
  const lenient = node.answer.goaway !== undefined ? connectionLeniencies(frames, node.answer) : [];
  // A codec app that got more than nghttp2's is a failure, unless nghttp2 ended the connection for a reason the codec does not take as one.
  const problems = {
    push(problem: string): void {
      if (lenient.length === 0) failures.push(problem);
      else differences.push(`the codec's app got more after ${lenient.join(", ")}`);
    },
  };
  const label = list.length === 0 ? "valid" : [...new Set(list.map((m) => m.kind))].sort().join(" + ");
  const fault = codec.app.get(-1);
  if (fault !== undefined) failures.push(`the codec's handler faulted: ${fault.head[1]}`);
  const ids = new Set([...codec.app.keys(), ...node.app.keys(), ...codec.answer.resets.keys(), ...node.answer.resets.keys()].filter((id) => id > 0));
  let appAgrees = true;
  // On a stream the client reset, node:http2 ends the request's body as if the client had: whether it ended is not compared there.
  const resetByClient = new Set(frames.filter((f) => f.type === FRAME.RST_STREAM).map((f) => f.streamId & 0x7fffffff));
  for (const id of [...ids].sort((a, b) => a - b)) {
    const ours = codec.app.get(id);
    const theirs = node.app.get(id);
    if (ours !== undefined && theirs === undefined && lostInTeardown(id, codec.answer, node.answer)) {
      appAgrees = false;
      differences.push("nghttp2's app never heard of a head nghttp2 took (node:http2 tore the session down in the same read)");
    } else if (ours !== undefined && theirs === undefined) {
      appAgrees = false;
      problems.push(`stream ${id}: the codec's app took a request nghttp2 kept from its app: ${printable(ours.head)}`);
    } else if (ours === undefined && theirs !== undefined) {
      appAgrees = false;
      differences.push("nghttp2's app took a request the codec refused");
    } else if (ours !== undefined && theirs !== undefined) {
      if (JSON.stringify(ours.head) !== JSON.stringify(theirs.head)) {
        appAgrees = false;
        // No connection error explains a list that differs: always a failure.
        failures.push(`stream ${id}: the apps got different header lists: codec ${printable(ours.head)}, nghttp2 ${printable(theirs.head)}`);
      }
      if (resetByClient.has(id)) theirs.ended = ours.ended;
      if (ours.bodyOctets > theirs.bodyOctets || (ours.ended && !theirs.ended)) {
        appAgrees = false;
        problems.push(`stream ${id}: the codec's app got more: ${ours.bodyOctets} octets${ours.ended ? " and the end" : ""}, nghttp2's ${theirs.bodyOctets}${theirs.ended ? " and the end" : ""}`);
      } else if (ours.bodyOctets < theirs.bodyOctets || ours.ended !== theirs.ended) {
        appAgrees = false;
        differences.push(`nghttp2's app got more of a body (${theirs.ended ? "ended" : "not ended"}) than the codec's (${ours.ended ? "ended" : "not ended"})`);
      }
    }
    const ourReset = codec.answer.resets.get(id)?.[0];
    const theirReset = node.answer.resets.get(id)?.[0];
    if (ourReset !== theirReset) differences.push(`RST_STREAM: nghttp2 ${codeName(theirReset)}, codec ${codeName(ourReset)}`);
  }
  if (codec.answer.goaway !== node.answer.goaway) differences.push(`GOAWAY: nghttp2 ${codeName(node.answer.goaway)}, codec ${codeName(codec.answer.goaway)}`);
  if (codec.answer.end !== node.answer.end) differences.push(`the wait ended: nghttp2 ${node.answer.end}, codec ${codec.answer.end}`);
  if (list.length === 0 && !appAgrees) failures.push("an unmutated session reached the two apps differently");
  if (appAgrees) {
    verdicts.agreed++;
    if (list.length === 0) verdicts.agreedValid++;
    const refused = (answer: Answer) => [...answer.resets.values()].some((codes) => codes.some((code) => code !== 8)) || (answer.goaway ?? 0) !== 0;
    if (refused(codec.answer) && refused(node.answer)) verdicts.refusedByBoth++;
  }
  // What reached the apps is counted by the case's mutations; the frames that came back, by kind alone.
  for (const difference of new Set(differences)) verdicts.count(difference.startsWith("nghttp2's app") || difference.startsWith("the codec's app") ? `app: ${label}: ${difference}` : `wire: ${difference}`);
  return failures;
}
