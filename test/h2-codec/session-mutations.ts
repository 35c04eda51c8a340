// Mutations of a valid client session for the differential: invalid fields (RFC 9113 §8), bad stream ids, lengths, flags and HPACK, reordered, dropped or repeated frames.
import fc from "fast-check";
import { FLAG, FRAME } from "../relay/http2/h2-frames.js";
import type { Field, FrameSpec, Request, Script } from "./session-script.js";

/** One mutation: its kind names the class of the case; `at` picks the request or frame, `arg` the variant. */
export interface Mutation {
  kind: string;
  at: number;
  arg: number;
}

export type FieldMutation = (req: Request, arg: number) => void;
export type FrameMutation = (frames: FrameSpec[], at: number, arg: number) => void;

export const pick = <T>(list: readonly T[], arg: number): T => list[arg % list.length] as T;
const regularAt = (req: Request, arg: number): Field | undefined => {
  const regular = req.fields.filter(([name]) => !name.startsWith(":"));
  return regular.length === 0 ? undefined : pick(regular, arg);
};
/** A pseudo-field of the head; a head left without any (a response's :status taken away) gets a placeholder one to mutate. */
const pseudoAt = (req: Request, arg: number): Field => {
  const pseudo = req.fields.filter(([name]) => name.startsWith(":"));
  if (pseudo.length > 0) return pick(pseudo, arg);
  const placeholder: Field = [":status", "200"];
  req.fields.unshift(placeholder);
  return placeholder;
};
const insertAt = (text: string, arg: number, piece: string) => {
  const at = arg % (text.length + 1);
  return text.slice(0, at) + piece + text.slice(at);
};
const bodyLength = (req: Request) => req.data.reduce((sum, { length }) => sum + length, 0);

/** Request-level mutations: the header list (or trailers) made invalid, or valid in an unusual way. */
export const FIELD_MUTATIONS: Record<string, FieldMutation> = {
  "uppercase name": (req, arg) => req.fields.push([pick(["X-Upper", "Accept", "x-Mixed"], arg), "v"]),
  "NUL/CR/LF in value": (req, arg) => {
    const field = regularAt(req, arg) ?? (req.fields[req.fields.push(["x-v", "ab"]) - 1] as Field);
    field[1] = insertAt(field[1], arg >> 2, pick(["\0", "\r", "\n", "\r\n"], arg));
  },
  "NUL/CR/LF in pseudo value": (req, arg) => {
    const field = pseudoAt(req, arg);
    field[1] = insertAt(field[1], (arg >> 2) + 1, pick(["\0", "\r", "\n", "\r\nx-injected: 1"], arg));
  },
  "other CTL in value": (req, arg) => req.fields.push(["x-ctl", insertAt("ab", arg >> 3, pick(["\x01", "\x08", "\x1f", "\x7f", "\x0b"], arg))]),
  "HTAB or obs-text in value": (req, arg) => req.fields.push(["x-text", pick(["a\tb", "caf\xe9", "\xff"], arg)]),
  "edge whitespace in value": (req, arg) => req.fields.push(["x-ws", pick([" a", "a ", "\ta", "a\t", " "], arg)]),
  "invalid name octet": (req, arg) => req.fields.push([pick(["x y", "x:y", "x\"y", "x(y)", "\xe9", "x\x01", ""], arg), "v"]),
  "connection-specific field": (req, arg) => req.fields.push(pick<Field>([["connection", "keep-alive"], ["keep-alive", "5"], ["proxy-connection", "close"], ["transfer-encoding", "chunked"], ["upgrade", "h2c"]], arg)),
  "te": (req, arg) => req.fields.push(["te", pick(["trailers", "gzip", "trailers, deflate", "Trailers"], arg)]),
  "unknown pseudo": (req, arg) => req.fields.splice(arg % 3, 0, [pick([":foo", ":protocol", ":status", ":"], arg), pick(["websocket", "200", "x"], arg >> 2)]),
  "repeated pseudo": (req, arg) => {
    const [name, value] = pseudoAt(req, arg);
    req.fields.splice(1, 0, [name, arg & 4 ? value : value + "x"]);
  },
  "missing pseudo": (req, arg) => {
    const name = pick([":method", ":scheme", ":path", ":authority"], arg);
    req.fields = req.fields.filter(([n]) => n !== name);
  },
  "pseudo after regular": (req, arg) => {
    const index = req.fields.findIndex(([name]) => name === pick([":method", ":path", ":scheme"], arg));
    const [moved] = req.fields.splice(index, 1);
    req.fields.push(["x-before", "1"], moved as Field);
  },
  ":path form": (req, arg) => (pseudoByName(req, ":path")[1] = pick(["", "*", "abc", "//x", "http://a/b", "/a b"], arg)),
  ":method form": (req, arg) => (pseudoByName(req, ":method")[1] = pick(["get", "G ET", "", "CONNECT", "FOO"], arg)),
  "CONNECT": (req, arg) => {
    req.fields = [[":method", "CONNECT"], [":authority", "example.test:443"]];
    if (arg & 1) req.fields.push([":path", "/"]);
    if (arg & 2) req.fields.push([":scheme", "http"]);
    if (arg & 4) req.fields.push([":protocol", "websocket"]);
  },
  "content-length mismatch": (req, arg) => {
    req.fields = req.fields.filter(([name]) => name !== "content-length");
    if (req.data.length === 0) req.data.push({ length: 1 + (arg % 50), pad: undefined });
    req.fields.push(["content-length", String(Math.max(0, bodyLength(req) + pick([-1, 1, 100], arg)))]);
  },
  "content-length form": (req, arg) => {
    req.fields = req.fields.filter(([name]) => name !== "content-length");
    const length = bodyLength(req);
    const forms = [`+${length}`, `0${length}`, `${length}, ${length}`, "", "x", `${length} `, "99999999999999999999"];
    req.fields.push(["content-length", pick(forms, arg)]);
    if (arg & 8) req.fields.push(["content-length", String(length)]);
  },
  "pseudo in trailers": (req, arg) => (req.trailers = [...(req.trailers ?? []), [pick([":path", ":status", ":foo"], arg), "/x"]]),
  "invalid field in trailers": (req, arg) => (req.trailers = [...(req.trailers ?? []), pick<Field>([["X-Up", "1"], ["x-nl", "a\nb"], ["connection", "close"], ["te", "gzip"]], arg)]),
  "no END_STREAM": (req) => (req.ends = false),
  "oversized head": (req, arg) => req.fields.push(["x-big", "b".repeat(pick([17000, 16500, 20000], arg))]),
  "many fields": (req, arg) => {
    for (let i = 0; i < pick([100, 130, 200], arg); i++) req.fields.push([`x-f${i}`, "v"]);
  },
  "cookie and host": (req, arg) => req.fields.push(...pick<Field[]>([[["cookie", "a=1"], ["cookie", "b=2"]], [["host", "other.test"]], [["cookie", ""]]], arg)),
};

function pseudoByName(req: Request, name: string): Field {
  return req.fields.find(([n]) => n === name) ?? (req.fields[req.fields.push([name, ""]) - 1] as Field);
}

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};

/** Frame-level mutations, after rendering. */
export const FRAME_MUTATIONS: Record<string, FrameMutation> = {
  "reorder frames": (frames, at) => {
    const i = 1 + (at % Math.max(1, frames.length - 1));
    if (i + 1 < frames.length) [frames[i], frames[i + 1]] = [frames[i + 1] as FrameSpec, frames[i] as FrameSpec];
  },
  "drop frame": (frames, at) => void frames.splice(1 + (at % Math.max(1, frames.length - 1)), 1),
  "repeat frame": (frames, at) => {
    const i = at % frames.length;
    frames.splice(i, 0, { ...(frames[i] as FrameSpec) });
  },
  "random flags": (frames, at, arg) => {
    const f = frames[at % frames.length] as FrameSpec;
    f.flags |= arg & 0xff;
  },
  "bad stream id": (frames, at, arg) => {
    const f = frames[at % frames.length] as FrameSpec;
    f.streamId = pick([0, 2, f.streamId + 2, f.streamId + 100, 0x7fffffff, f.streamId | 0x80000000, Math.max(1, f.streamId - 2)], arg);
  },
  "bad fixed length": (frames, at, arg) => {
    const sizes: [number, number, Buffer][] = [[FRAME.PING, 0, Buffer.alloc(8)], [FRAME.RST_STREAM, 1, u32(8)], [FRAME.WINDOW_UPDATE, 0, u32(1)], [FRAME.PRIORITY, 1, Buffer.alloc(5)], [FRAME.SETTINGS, 0, Buffer.alloc(6)], [FRAME.GOAWAY, 0, Buffer.alloc(8)]];
    const [type, streamId, payload] = pick(sizes, arg);
    const delta = arg & 8 ? 1 : -1;
    const wrong = delta > 0 ? Buffer.concat([payload, Buffer.alloc(1)]) : payload.subarray(0, payload.length - 1);
    frames.splice(at % (frames.length + 1), 0, { type, flags: 0, streamId, payload: wrong, label: "bad length" });
  },
  "oversized frame": (frames, at, arg) => frames.splice(at % (frames.length + 1), 0, { type: pick([FRAME.DATA, FRAME.PING, 0x30], arg), flags: 0, streamId: arg & 8 ? 1 : 0, payload: Buffer.alloc(16385), label: "oversized" }),
  "padding overrun": (frames, at) => {
    const padded = frames.filter((f) => (f.type === FRAME.DATA || f.type === FRAME.HEADERS) && f.payload.length > 0);
    if (padded.length === 0) return;
    const f = pick(padded, at);
    const payload = Buffer.from(f.payload);
    if ((f.flags & FLAG.PADDED) === 0) f.payload = Buffer.concat([Buffer.from([payload.length + (at & 1)]), payload]);
    else {
      payload[0] = payload.length - 1 + (at & 1);
      f.payload = payload;
    }
    f.flags |= FLAG.PADDED;
  },
  "window update": (frames, at, arg) => frames.splice(at % (frames.length + 1), 0, { type: FRAME.WINDOW_UPDATE, flags: 0, streamId: pick([0, 1, 3], arg), payload: u32(pick([0, 0x7fffffff, 0x80000001], arg >> 2)), label: "window" }),
  "CONTINUATION out of place": (frames, at, arg) => {
    const i = at % (frames.length + 1);
    if (arg & 1) frames.splice(i, 0, { type: FRAME.CONTINUATION, flags: FLAG.END_HEADERS, streamId: 1, payload: Buffer.from([0x82]), label: "stray continuation" });
    else {
      const head = frames.findIndex((f) => f.type === FRAME.HEADERS && (f.flags & FLAG.END_HEADERS) === 0);
      if (head >= 0) frames.splice(head + 1, 0, { type: FRAME.PING, flags: 0, streamId: 0, payload: Buffer.alloc(8), label: "interrupting ping" });
    }
  },
  "PRIORITY on itself": (frames, at) => {
    const f = frames[at % frames.length] as FrameSpec;
    const streamId = f.streamId || 1;
    frames.splice(at % frames.length, 0, { type: FRAME.PRIORITY, flags: 0, streamId, payload: Buffer.concat([u32(streamId), Buffer.from([16])]), label: "priority self" });
  },
  "bad SETTINGS": (frames, at, arg) => {
    const entry = pick<[number, number]>([[2, 2], [4, 0x80000000], [5, 16383], [5, 1 << 24], [3, 0xffffffff]], arg);
    const payload = Buffer.alloc(6);
    payload.writeUInt16BE(entry[0]);
    payload.writeUInt32BE(entry[1] >>> 0, 2);
    frames.splice(at % (frames.length + 1), 0, { type: FRAME.SETTINGS, flags: arg & 8 ? FLAG.ACK : 0, streamId: arg & 16 ? 1 : 0, payload, label: "bad settings" });
  },
  "RST_STREAM": (frames, at, arg) => frames.splice(at % (frames.length + 1), 0, { type: FRAME.RST_STREAM, flags: 0, streamId: pick([0, 1, 3, 5, 99], arg), payload: u32(arg >> 3), label: "rst" }),
  "GOAWAY": (frames, at, arg) => frames.splice(at % (frames.length + 1), 0, { type: FRAME.GOAWAY, flags: 0, streamId: arg & 1 ? 1 : 0, payload: Buffer.concat([u32(arg >> 4), u32(arg % 3)]), label: "goaway" }),
  "bad HPACK": (frames, at, arg) => {
    const heads = frames.filter((f) => f.type === FRAME.HEADERS && (f.flags & (FLAG.PADDED | FLAG.PRIORITY)) === 0);
    if (heads.length === 0) return;
    const f = pick(heads, at);
    const garbage = pick([[0x80], [0xff, 0xff, 0xff, 0xff, 0x7f], [0x3f, 0xe1, 0x7f], [0x00, 0x85, 0xff, 0xff, 0xff, 0xff, 0xff], [0x00, 0x7f], [0x40]], arg);
    f.payload = arg & 8 ? Buffer.concat([Buffer.from(garbage), f.payload]) : Buffer.concat([f.payload, Buffer.from(garbage)]);
  },
  "truncated HPACK": (frames, at, arg) => {
    const heads = frames.filter((f) => f.type === FRAME.HEADERS && (f.flags & (FLAG.PADDED | FLAG.PRIORITY)) === 0 && f.payload.length > 1);
    if (heads.length > 0) pick(heads, at).payload = pick(heads, at).payload.subarray(0, 1 + (arg % (pick(heads, at).payload.length - 1)));
  },
  "unexpected SETTINGS ACK": (frames, at) => frames.splice(at % (frames.length + 1), 0, { type: FRAME.SETTINGS, flags: FLAG.ACK, streamId: 0, payload: Buffer.alloc(0), label: "settings ack" }, { type: FRAME.SETTINGS, flags: FLAG.ACK, streamId: 0, payload: Buffer.alloc(0), label: "settings ack" }),
  "unknown frame": (frames, at, arg) => frames.splice(at % (frames.length + 1), 0, { type: 0x0a + (arg % 20), flags: arg & 0xff, streamId: arg % 4, payload: Buffer.alloc(arg % 30, 7), label: "unknown" }),
};

export const FIELD_KINDS = Object.keys(FIELD_MUTATIONS);
export const FRAME_KINDS = Object.keys(FRAME_MUTATIONS);

/** Up to two mutations of `kinds` a case; a third of the cases have none (the valid sessions must agree exactly). */
export function mutationsOf(kinds: readonly string[]): fc.Arbitrary<Mutation[]> {
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant<Mutation[]>([]) },
    { weight: 2, arbitrary: fc.array(fc.record({ kind: fc.constantFrom(...kinds), at: fc.nat(64), arg: fc.nat(0xffff) }), { minLength: 1, maxLength: 2 }) },
  );
}

export const mutations = mutationsOf([...FIELD_KINDS, ...FRAME_KINDS]);

/** Applies the request-level mutations (of `table`) to a copy of the script. */
export function mutateScript(s: Script, list: readonly Mutation[], table: Record<string, FieldMutation> = FIELD_MUTATIONS): Script {
  const copy: Script = structuredClone(s);
  for (const m of list) {
    const apply = table[m.kind];
    if (apply === undefined) continue;
    const req = copy.requests[m.at % copy.requests.length] as Request;
    apply(req, m.arg);
  }
  return copy;
}

/** Applies the frame-level mutations (of `table`) to rendered frames (in place). */
export function mutateFrames(frames: FrameSpec[], list: readonly Mutation[], table: Record<string, FrameMutation> = FRAME_MUTATIONS): void {
  for (const m of list) table[m.kind]?.(frames, m.at, m.arg);
}
