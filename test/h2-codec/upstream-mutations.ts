// Mutations of a valid app session for the upstream differential: the session differential's field and frame mutations that apply to a response, and the response's own (:status, request pseudo-fields, content on HEAD/204/304, 1xx mistakes, frames on idle or closed streams, PUSH_PROMISE).
import { FLAG, FRAME } from "../relay/http2/h2-frames.js";
import { FIELD_MUTATIONS, FRAME_MUTATIONS, mutationsOf, pick, type FieldMutation, type FrameMutation } from "./session-mutations.js";
import type { Field, FrameSpec } from "./session-script.js";

/** The session differential's field mutations that mean the same in a response (the others are about request pseudo-fields). */
const SHARED_FIELD_KINDS = [
  "uppercase name",
  "NUL/CR/LF in value",
  "NUL/CR/LF in pseudo value",
  "other CTL in value",
  "HTAB or obs-text in value",
  "edge whitespace in value",
  "invalid name octet",
  "connection-specific field",
  "te",
  "unknown pseudo",
  "repeated pseudo",
  "content-length mismatch",
  "content-length form",
  "pseudo in trailers",
  "invalid field in trailers",
  "no END_STREAM",
  "oversized head",
  "many fields",
];

const statusOf = (fields: Field[]): Field => fields.find(([name]) => name === ":status") ?? (fields[fields.push([":status", "200"]) - 1] as Field);

const RESPONSE_FIELD_MUTATIONS: Record<string, FieldMutation> = {
  ":status form": (res, arg) => (statusOf(res.fields)[1] = pick(["", "20", "2000", "abc", "099", "600", "999", " 200", "200 ", "2x0", "101", "+20"], arg)),
  "missing :status": (res) => (res.fields = res.fields.filter(([name]) => name !== ":status")),
  "request pseudo in response": (res, arg) => res.fields.splice(arg & 8 ? 0 : 1, 0, pick<Field>([[":method", "GET"], [":path", "/"], [":authority", "example.test"], [":scheme", "http"], [":protocol", "websocket"]], arg)),
  ":status after regular": (res) => {
    const status = statusOf(res.fields);
    res.fields = [...res.fields.filter((field) => field !== status), ["x-before", "1"], status];
  },
  "content without content": (res, arg) => {
    // A 204 or 304 with DATA, or a 204 with a content-length: RFC 9110 §6.4.1, §8.6.
    statusOf(res.fields)[1] = pick(["204", "304"], arg);
    if (arg & 4) res.fields.push(["content-length", pick(["0", "5", "1234"], arg >> 3)]);
    else res.data.push({ length: 1 + (arg % 40), pad: undefined });
  },
  "interim misuse": (res, arg) => {
    const interim = pick<Field[]>([[[":status", "101"]], [[":status", "100"], ["content-length", "5"]], [[":status", "199"], ["x-a", "b\r\nc"]], [[":status", "100"], [":path", "/"]], [["x-no-status", "1"]]], arg);
    res.interim = [...(res.interim ?? []), interim];
  },
  "1xx as the final head": (res, arg) => {
    statusOf(res.fields)[1] = pick(["100", "103"], arg);
    res.trailers = undefined;
  },
};

/** Where a stream's frames start and end in the rendered list. */
const firstOf = (frames: readonly FrameSpec[], streamId: number, type: number) => frames.findIndex((f) => f.streamId === streamId && f.type === type);
const streamAt = (frames: readonly FrameSpec[], at: number): number => {
  const ids = [...new Set(frames.filter((f) => f.request !== undefined).map((f) => f.streamId))];
  return ids.length === 0 ? 1 : pick(ids, at);
};
const headers = (streamId: number, flags: number, block: number[], label: string): FrameSpec => ({ type: FRAME.HEADERS, flags: FLAG.END_HEADERS | flags, streamId, payload: Buffer.from(block), label });

const RESPONSE_FRAME_MUTATIONS: Record<string, FrameMutation> = {
  "DATA before HEADERS": (frames, at, arg) => {
    const streamId = streamAt(frames, at);
    const head = firstOf(frames, streamId, FRAME.HEADERS);
    frames.splice(head < 0 ? frames.length : head, 0, { type: FRAME.DATA, flags: arg & 1, streamId, payload: Buffer.alloc(arg % 20, 0x64), label: "early data" });
  },
  "frame on a closed stream": (frames, at, arg) => {
    const streamId = streamAt(frames, at);
    const end = frames.findLastIndex((f) => f.streamId === streamId && (f.flags & FLAG.END_STREAM) !== 0 && (f.type === FRAME.DATA || f.type === FRAME.HEADERS));
    if (end < 0) return;
    // 0x88: :status 200 (static index 8); 0x40 ...: a new header block a closed stream may not open.
    const late = pick<FrameSpec>([{ type: FRAME.DATA, flags: FLAG.END_STREAM, streamId, payload: Buffer.from("late"), label: "late data" }, headers(streamId, FLAG.END_STREAM, [0x88], "late headers"), { type: FRAME.WINDOW_UPDATE, flags: 0, streamId, payload: Buffer.from([0, 0, 1, 0]), label: "late window" }], arg);
    frames.splice(end + 1 + (arg >> 2) % Math.max(1, frames.length - end), 0, late);
  },
  "frame on an idle stream": (frames, at, arg) => {
    const opened = new Set(frames.filter((f) => f.request !== undefined).map((f) => f.streamId)).size;
    // An odd id the client never opened, or an even one (a push it never promised): RFC 9113 §5.1.
    const streamId = arg & 1 ? 2 * opened + 1 + 2 * ((arg >> 1) % 3) : 2 + 2 * ((arg >> 1) % 3);
    const frame = pick<FrameSpec>([headers(streamId, FLAG.END_STREAM, [0x88], "idle headers"), { type: FRAME.DATA, flags: 0, streamId, payload: Buffer.from("x"), label: "idle data" }, { type: FRAME.RST_STREAM, flags: 0, streamId, payload: Buffer.from([0, 0, 0, 8]), label: "idle rst" }], arg >> 3);
    frames.splice(at % (frames.length + 1), 0, frame);
  },
  "PUSH_PROMISE": (frames, at, arg) => {
    // The client disabled push (SETTINGS_ENABLE_PUSH 0): a PUSH_PROMISE is a connection error (RFC 9113 §6.6).
    const payload = Buffer.from([0, 0, 0, 2 + 2 * (arg % 3), 0x82, 0x86, 0x84, 0x41, 0x01, 0x61]);
    frames.splice(at % (frames.length + 1), 0, { type: 5, flags: FLAG.END_HEADERS, streamId: streamAt(frames, at), payload, label: "push promise" });
  },
  "interim END_STREAM": (frames, at) => {
    const interims = frames.filter((f) => f.label === "interim");
    if (interims.length > 0) pick(interims, at).flags |= FLAG.END_STREAM;
  },
};

export const UPSTREAM_FIELD_MUTATIONS: Record<string, FieldMutation> = { ...Object.fromEntries(SHARED_FIELD_KINDS.map((kind) => [kind, FIELD_MUTATIONS[kind] as FieldMutation])), ...RESPONSE_FIELD_MUTATIONS };
export const UPSTREAM_FRAME_MUTATIONS: Record<string, FrameMutation> = { ...FRAME_MUTATIONS, ...RESPONSE_FRAME_MUTATIONS };

export const upstreamMutations = mutationsOf([...Object.keys(UPSTREAM_FIELD_MUTATIONS), ...Object.keys(UPSTREAM_FRAME_MUTATIONS)]);
