// Valid client sessions for the session differential: requests of random fields, bodies, padding, CONTINUATION splits and trailers, interleaved with control frames, rendered to frames.
import fc from "fast-check";
import { ByteBuffer } from "../../src/h2-codec/byte-buffer.js";
import { HpackEncoder } from "../../src/h2-codec/hpack-encoder.js";
import { FLAG, FRAME, PREFACE, encodeField, frame, type FieldForm } from "../relay/http2/h2-frames.js";

export type Field = [name: string, value: string];

/** One request as the client sends it (or, for the upstream differential, one response as the app sends it); the mutations change these before rendering. */
export interface Request {
  fields: Field[];
  /** Response heads before `fields` (1xx), each one HEADERS frame without END_STREAM; requests have none. */
  interim?: Field[][];
  /** DATA frames: length and padding (undefined: not PADDED). */
  data: { length: number; pad: number | undefined }[];
  trailers: Field[] | undefined;
  /** How many frames the head's block is cut into (HEADERS, then CONTINUATIONs). */
  headPieces: number;
  headPad: number | undefined;
  headPriority: boolean;
  /** Whether END_STREAM goes on the last frame (always, unless a mutation says otherwise). */
  ends: boolean;
}

/** A frame about to be sent; `request` ties it to a request (its stream id is fixed at rendering). */
export interface FrameSpec {
  type: number;
  flags: number;
  streamId: number;
  payload: Buffer;
  request?: number;
  label: string;
}

/** A control frame, placed after `at` request units; `target` picks a request for the stream-bound ones. */
export interface Control {
  kind: "ping" | "window" | "priority" | "settings" | "settings-ack" | "rst" | "unknown";
  at: number;
  target: number;
  value: number;
}

export interface Script {
  settings: [number, number][];
  requests: Request[];
  /** Which request's next unit goes out next (modulo the ones with units left): the interleaving. */
  order: number[];
  controls: Control[];
  hpack: "static" | "dynamic";
  forms: FieldForm[];
  goawayAtEnd: boolean;
}

export const value = fc.oneof(fc.constantFrom("", "gzip, deflate", "text/plain", "a=b; c=d", "1"), fc.stringMatching(/^[\x21-\x7e]([\x20-\x7e]{0,24}[\x21-\x7e])?$/));
const name = fc.oneof(fc.constantFrom("accept", "user-agent", "cookie", "content-type", "cache-control", "accept-encoding", "x-forwarded-for"), fc.stringMatching(/^x-[a-z0-9-]{1,10}$/));
const bodyMethod = fc.constantFrom("POST", "PUT", "PATCH", "DELETE");
const path = fc.oneof(fc.constant("/"), fc.stringMatching(/^\/[a-zA-Z0-9/._~%-]{0,30}(\?[a-z0-9=&]{0,12})?$/));

/** What a request and a response share: the body's DATA frames, a content-length or not, trailers, and how the head's frames are cut, padded and prioritised. */
export const messageParts = {
  data: fc.array(fc.record({ length: fc.integer({ min: 0, max: 1500 }), pad: fc.option(fc.integer({ min: 0, max: 40 }), { nil: undefined }) }), { maxLength: 3 }),
  contentLength: fc.boolean(),
  trailers: fc.option(fc.array(fc.tuple(fc.stringMatching(/^x-t[a-z]{0,6}$/), value), { minLength: 1, maxLength: 2 }), { nil: undefined, freq: 3 }),
  headPieces: fc.integer({ min: 1, max: 3 }),
  headPad: fc.option(fc.integer({ min: 0, max: 30 }), { nil: undefined, freq: 3 }),
  headPriority: fc.boolean(),
};

const request: fc.Arbitrary<Request> = fc
  .record({
    method: fc.oneof(fc.constantFrom("GET", "HEAD", "OPTIONS"), bodyMethod),
    scheme: fc.constantFrom("http", "https"),
    path,
    authority: fc.option(fc.constantFrom("localhost", "127.0.0.1:8080", "example.test"), { nil: undefined, freq: 6 }),
    // At most one host, of authority characters: nghttp2 refuses a second or an empty one and drops one of other octets.
    host: fc.option(fc.constantFrom("localhost", "example.test:8443", "[::1]:80"), { nil: undefined, freq: 3 }),
    regular: fc.array(fc.tuple(name, value), { maxLength: 6 }),
    ...messageParts,
  })
  .map(({ method, scheme, path, authority, host, regular, data, contentLength, trailers, headPieces, headPad, headPriority }) => {
    // Requests without a body are sent the usual way: HEADERS with END_STREAM, no DATA.
    const body = method === "GET" || method === "HEAD" || method === "OPTIONS" ? [] : data;
    const fields: Field[] = [[":method", method], [":scheme", scheme], [":path", path]];
    if (authority !== undefined) fields.push([":authority", authority]);
    if (contentLength) fields.push(["content-length", String(body.reduce((sum, { length }) => sum + length, 0))]);
    if (host !== undefined) fields.push(["host", host]);
    return { fields: [...fields, ...regular.filter(([name]) => name !== "content-length")], data: body, trailers, headPieces, headPad, headPriority, ends: true };
  });

const setting = fc.oneof(
  fc.tuple(fc.constant(1), fc.constantFrom(0, 256, 4096, 65536)),
  fc.tuple(fc.constant(2), fc.constantFrom(0, 1)),
  fc.tuple(fc.constant(3), fc.constantFrom(0, 10, 100)),
  fc.tuple(fc.constant(4), fc.constantFrom(0, 100, 65535, 1 << 20)),
  fc.tuple(fc.constant(5), fc.constantFrom(16384, 32768, 16777215)),
  fc.tuple(fc.constant(6), fc.constantFrom(1024, 65536)),
  fc.tuple(fc.constant(0x99), fc.nat()),
);

export const control: fc.Arbitrary<Control> = fc.record({
  kind: fc.constantFrom("ping", "window", "priority", "settings", "settings-ack", "rst", "unknown"),
  at: fc.nat(20),
  target: fc.nat(7),
  value: fc.nat(),
});

export const script: fc.Arbitrary<Script> = fc.record({
  settings: fc.array(setting, { maxLength: 3 }),
  requests: fc.array(request, { minLength: 1, maxLength: 4 }),
  order: fc.array(fc.nat(3), { maxLength: 16 }),
  controls: fc.array(control, { maxLength: 4 }),
  hpack: fc.constantFrom("static", "dynamic"),
  forms: fc.array(fc.constantFrom<FieldForm>("indexed", "literal", "indexed-name", "never"), { minLength: 1, maxLength: 4 }),
  goawayAtEnd: fc.boolean(),
});

type Unit = { request: number; part: "interim" | "head" | "data" | "trailers"; at: number };

/** A message's units in order: its interim heads, its head (one unit, however many frames), each DATA, its trailers. */
function unitsOf(index: number, req: Request): Unit[] {
  const units: Unit[] = (req.interim ?? []).map((_, at) => ({ request: index, part: "interim", at }));
  units.push({ request: index, part: "head", at: 0 });
  req.data.forEach((_, at) => units.push({ request: index, part: "data", at }));
  if (req.trailers !== undefined) units.push({ request: index, part: "trailers", at: 0 });
  return units;
}

function padded(content: Buffer, pad: number | undefined, prefix: Buffer = Buffer.alloc(0)): Buffer {
  if (pad === undefined) return Buffer.concat([prefix, content]);
  return Buffer.concat([Buffer.from([pad]), prefix, content, Buffer.alloc(pad)]);
}

/**
 * The frames of a script, stream ids given in the order the requests' heads go out (1, 3, 5...);
 * with `fixedIds` (the upstream side: the client opened the streams) request i is stream 2i+1.
 */
export function renderScript(s: Script, fixedIds = false): FrameSpec[] {
  const frames: FrameSpec[] = [{ type: FRAME.SETTINGS, flags: 0, streamId: 0, payload: settingsPayload(s.settings), label: "settings" }];
  const queues = s.requests.map((req, index) => unitsOf(index, req));
  const ids = new Map<number, number>();
  const encoder = new HpackEncoder();
  let formAt = 0;
  const block = (fields: Field[]): Buffer => {
    if (s.hpack === "dynamic") {
      const out = new ByteBuffer();
      encoder.encode(fields.flat(), out);
      return Buffer.from(out.buffer.subarray(0, out.length));
    }
    return Buffer.concat(fields.map(([name, value]) => encodeField({ name, value, form: s.forms[formAt++ % s.forms.length] as FieldForm })));
  };
  if (fixedIds) s.requests.forEach((_, index) => ids.set(index, 2 * index + 1));
  const idOf = (request: number): number => ids.get(request) ?? 2 * ids.size + 1;
  let units = 0;
  let step = 0;
  let acked = false;
  const placeControls = (): void => {
    for (const c of s.controls) {
      if (c.at !== units) continue;
      const target = c.target % s.requests.length;
      // One ACK, for the server's first SETTINGS (nghttp2 takes a second as a connection error).
      if (c.kind === "settings-ack" && acked) continue;
      acked ||= c.kind === "settings-ack";
      const control = controlFrame(c, idOf(target), ids.size);
      // A client that resets its stream sends nothing more on it.
      if (control.type === FRAME.RST_STREAM) (queues[target] as unknown[]).length = 0;
      frames.push(control);
    }
  };
  placeControls();
  for (;;) {
    const live = queues.filter((queue) => queue.length > 0);
    if (live.length === 0) break;
    const queue = live[(s.order[step++] ?? 0) % live.length]!;
    const unit = queue.shift()!;
    const req = s.requests[unit.request]!;
    const last = queue.length === 0;
    if (!ids.has(unit.request)) ids.set(unit.request, 2 * ids.size + 1);
    const streamId = ids.get(unit.request)!;
    const endFlag = last && req.ends ? FLAG.END_STREAM : 0;
    if (unit.part === "data") {
      const { length, pad } = req.data[unit.at]!;
      frames.push({ type: FRAME.DATA, flags: endFlag | (pad === undefined ? 0 : FLAG.PADDED), streamId, payload: padded(Buffer.alloc(length, 0x61), pad), request: unit.request, label: "data" });
    } else if (unit.part === "interim") {
      frames.push({ type: FRAME.HEADERS, flags: FLAG.END_HEADERS, streamId, payload: block(req.interim![unit.at]!), request: unit.request, label: "interim" });
    } else {
      const head = unit.part === "head";
      const encoded = block(head ? req.fields : req.trailers!);
      const pieces = head ? req.headPieces : 1;
      const size = Math.ceil(encoded.length / pieces) || 1;
      const cuts = Array.from({ length: pieces }, (_, i) => encoded.subarray(i * size, (i + 1) * size));
      cuts.forEach((cut, i) => {
        const endHeaders = i === pieces - 1 ? FLAG.END_HEADERS : 0;
        if (i > 0) return frames.push({ type: FRAME.CONTINUATION, flags: endHeaders, streamId, payload: cut, request: unit.request, label: "continuation" });
        const pad = head ? req.headPad : undefined;
        const priority = head && req.headPriority ? Buffer.from([0, 0, 0, 0, 15]) : Buffer.alloc(0);
        const flags = endFlag | endHeaders | (pad === undefined ? 0 : FLAG.PADDED) | (priority.length > 0 ? FLAG.PRIORITY : 0);
        frames.push({ type: FRAME.HEADERS, flags, streamId, payload: padded(cut, pad, priority), request: unit.request, label: head ? "headers" : "trailers" });
      });
    }
    units++;
    placeControls();
  }
  // The last stream id: none of the server's (a client's GOAWAY), or the last the client opened (the app's).
  const lastId = Buffer.alloc(8);
  if (fixedIds) lastId.writeUInt32BE(2 * s.requests.length - 1);
  if (s.goawayAtEnd) frames.push({ type: FRAME.GOAWAY, flags: 0, streamId: 0, payload: lastId, label: "goaway" });
  return frames;
}

export function settingsPayload(entries: readonly (readonly [number, number])[]): Buffer {
  const payload = Buffer.alloc(entries.length * 6);
  entries.forEach(([id, value], i) => {
    payload.writeUInt16BE(id, i * 6);
    payload.writeUInt32BE(value >>> 0, i * 6 + 2);
  });
  return payload;
}

/** A control frame; stream-bound ones go to a request's stream when it has been opened, else to stream 0's neighbours. */
function controlFrame(c: Control, streamId: number, opened: number): FrameSpec {
  const u32 = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(n >>> 0);
    return b;
  };
  const onStream = streamId <= 2 * opened - 1;
  switch (c.kind) {
    case "ping":
      return { type: FRAME.PING, flags: 0, streamId: 0, payload: Buffer.alloc(8, c.value & 0xff), label: "ping" };
    case "window":
      return { type: FRAME.WINDOW_UPDATE, flags: 0, streamId: onStream && c.value % 2 === 0 ? streamId : 0, payload: u32(1 + (c.value % 100000)), label: "window" };
    case "priority":
      // PRIORITY is legal on any stream, idle ones included (RFC 9113 §6.3).
      return { type: FRAME.PRIORITY, flags: 0, streamId: c.value % 2 === 0 ? streamId : streamId + 40, payload: Buffer.concat([u32(0), Buffer.from([c.value & 0xff])]), label: "priority" };
    case "settings":
      return { type: FRAME.SETTINGS, flags: 0, streamId: 0, payload: settingsPayload([[4, 65535], [1, 4096]].slice(0, 1 + (c.value % 2)) as [number, number][]), label: "settings" };
    case "settings-ack":
      return { type: FRAME.SETTINGS, flags: FLAG.ACK, streamId: 0, payload: Buffer.alloc(0), label: "settings-ack" };
    case "rst":
      // A reset of an opened stream, CANCEL: the client gave up (only opened ones, or it would be a connection error).
      return onStream ? { type: FRAME.RST_STREAM, flags: 0, streamId, payload: u32(8), label: "rst" } : { type: FRAME.PING, flags: 0, streamId: 0, payload: Buffer.alloc(8), label: "ping" };
    case "unknown":
      return { type: 0x20 + (c.value % 16), flags: c.value & 0xff, streamId: c.value % 5, payload: Buffer.alloc(c.value % 9, 1), label: "unknown" };
  }
}

/** The bytes of a case: the preface, then every frame. */
export function serialize(frames: readonly FrameSpec[], preface: Buffer = PREFACE): Buffer {
  return Buffer.concat([preface, ...frames.map(({ type, flags, streamId, payload }) => frame(type, flags, streamId, payload))]);
}

/** A case's bytes cut into socket writes at `cuts` (positions modulo the length). */
export function piecesOf(bytes: Buffer, cuts: readonly number[]): Buffer[] {
  if (bytes.length === 0) return [];
  const at = [...new Set(cuts.map((cut) => cut % bytes.length))].filter((cut) => cut > 0).sort((a, b) => a - b);
  return [0, ...at].map((start, i) => bytes.subarray(start, at[i] ?? bytes.length));
}
