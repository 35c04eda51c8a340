// The h2 frame fuzz's connections: streams laid out as frames (CONTINUATION splits, padding, priority, interleaved DATA, resets, stray PING/SETTINGS/WINDOW_UPDATE), and byte or frame mutations of them.
import fc from "fast-check";
import { FLAG, FRAME, MAX_FRAME_PAYLOAD, PREFACE, frame, headerBlock, settingsFrame, type HeaderField } from "./h2-frames.js";
import { buildStream, streamParts, type StreamSpec } from "./h2-fuzz-streams.js";
import { mutate, type Mutation } from "../request-fuzz.js";

/** How one stream's frames look on the wire. */
const layout = fc.record({
  /** Where the header block is cut into HEADERS and CONTINUATION frames. */
  blockCuts: fc.oneof({ weight: 2, arbitrary: fc.constant([] as number[]) }, { weight: 1, arbitrary: fc.array(fc.nat(), { minLength: 1, maxLength: 3 }) }),
  headersPadding: fc.option(fc.nat(24), { freq: 4 }),
  priority: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.boolean() }),
  dataPadding: fc.array(fc.option(fc.nat(12), { freq: 3 }), { minLength: 4, maxLength: 4 }),
  /** END_STREAM in an empty DATA frame after the body (as some clients send it), not on its last frame. */
  emptyDataLast: fc.boolean(),
});

const SETTINGS_CHOICES: ReadonlyArray<readonly [number, number]> = [[1, 4096], [1, 0], [1, 256], [2, 0], [3, 100], [4, 65535], [4, 1 << 20], [5, 16384], [5, 32768], [6, 65536]];
/** A connection-level frame between two streams' frames. */
const stray = fc.oneof(
  fc.uint8Array({ minLength: 8, maxLength: 8 }).map((bytes) => frame(FRAME.PING, 0, 0, Buffer.from(bytes))),
  fc.integer({ min: 1, max: 65535 }).map((increment) => frame(FRAME.WINDOW_UPDATE, 0, 0, Buffer.from([0, 0, increment >> 8, increment & 0xff]))),
  fc.constant(settingsFrame([])),
);

type FrameMutation = { readonly kind: "drop" | "duplicate" | "swap" | "type" | "flags" | "stream" | "length"; readonly at: number; readonly value: number };
const frameMutation: fc.Arbitrary<FrameMutation> = fc.record({ kind: fc.constantFrom("drop", "duplicate", "swap", "type", "flags", "stream", "length"), at: fc.nat(), value: fc.nat() });
/** Bytes that mean something in a frame header or an HPACK block. */
const interestingByte = fc.constantFrom(0x00, 0x01, 0x04, 0x05, 0x08, 0x09, 0x20, 0x24, 0x3f, 0x40, 0x7f, 0x80, 0x82, 0xff, 0x0d, 0x0a, 0x3a);
const byteMutation: fc.Arbitrary<Mutation> = fc.record({
  kind: fc.constantFrom("flip", "replace", "replace", "insert", "delete", "truncate", "duplicate"),
  at: fc.nat(),
  length: fc.integer({ min: 1, max: 40 }),
  byte: interestingByte,
});

/** One case: a client connection of one to three streams, maybe mutated. */
export const connectionPlan = fc.record({
  settings: fc.subarray([...SETTINGS_CHOICES], { maxLength: 3 }),
  streams: fc.array(fc.tuple(streamParts, layout), { minLength: 1, maxLength: 3 }),
  /** Which stream's next frame goes next, taken in turn (header blocks keep their streams' order). */
  order: fc.array(fc.nat(), { maxLength: 12 }),
  strays: fc.array(fc.tuple(fc.nat(), stray), { maxLength: 2 }),
  mutations: fc.oneof(
    { weight: 2, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.record({ frames: fc.array(frameMutation, { maxLength: 2 }), bytes: fc.array(byteMutation, { maxLength: 3 }) }).filter((each) => each.frames.length + each.bytes.length > 0) },
  ),
});
export type ConnectionPlan = typeof connectionPlan extends fc.Arbitrary<infer T> ? T : never;

export interface BuiltStream extends StreamSpec {
  readonly id: number;
  readonly marker: string;
}

export interface BuiltConnection {
  readonly streams: readonly BuiltStream[];
  /** Everything the client writes, the preface first. */
  readonly bytes: Buffer;
  readonly mutated: boolean;
}

/** The header block as HEADERS and CONTINUATION frames, each within the 16 KiB frame size. */
function headerFrames(id: number, fields: readonly HeaderField[], endStream: boolean, shape: { blockCuts: readonly number[]; headersPadding: number | null; priority: boolean }, dependsOn: number): Buffer[] {
  const block = headerBlock(fields);
  const points = [...new Set(shape.blockCuts.map((at) => at % (block.length + 1)))].filter((at) => at > 0 && at < block.length).sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  for (const [index, start] of [0, ...points].entries()) {
    const piece = block.subarray(start, points[index] ?? block.length);
    for (let at = 0; at === 0 || at < piece.length; at += MAX_FRAME_PAYLOAD - 64) pieces.push(piece.subarray(at, at + MAX_FRAME_PAYLOAD - 64));
  }
  return pieces.map((piece, index) => {
    const last = index === pieces.length - 1 ? FLAG.END_HEADERS : 0;
    if (index > 0) return frame(FRAME.CONTINUATION, last, id, piece);
    let flags = last | (endStream ? FLAG.END_STREAM : 0);
    const before: Buffer[] = [];
    const after: Buffer[] = [];
    if (shape.headersPadding !== null) {
      flags |= FLAG.PADDED;
      before.push(Buffer.from([shape.headersPadding]));
      after.push(Buffer.alloc(shape.headersPadding));
    }
    if (shape.priority) {
      flags |= FLAG.PRIORITY;
      const dependency = Buffer.alloc(5);
      dependency.writeUInt32BE(dependsOn);
      dependency[4] = 15;
      before.push(dependency);
    }
    return frame(FRAME.HEADERS, flags, id, Buffer.concat([...before, piece, ...after]));
  });
}

function dataFrame(id: number, payload: Buffer, endStream: boolean, padding: number | null): Buffer {
  if (padding === null) return frame(FRAME.DATA, endStream ? FLAG.END_STREAM : 0, id, payload);
  return frame(FRAME.DATA, FLAG.PADDED | (endStream ? FLAG.END_STREAM : 0), id, Buffer.concat([Buffer.from([padding]), payload, Buffer.alloc(padding)]));
}

/** One stream's frames in groups that stay whole (a header block may not be interleaved). */
function streamUnits(stream: BuiltStream, shape: ConnectionPlan["streams"][number][1], dependsOn: number): Buffer[][] {
  const ends = stream.ending === "ends" || stream.ending === "reset-after-end";
  const units: Buffer[][] = [headerFrames(stream.id, stream.fields, stream.endsWithHeaders, shape, dependsOn)];
  if (!stream.endsWithHeaders) {
    const trailers = stream.trailers !== "none";
    const pieces = shape.emptyDataLast || (stream.body.length === 0 && !trailers) ? [...stream.body, Buffer.alloc(0)] : stream.body;
    pieces.forEach((piece, index) => units.push([dataFrame(stream.id, piece, ends && !trailers && index === pieces.length - 1, shape.dataPadding[index % 4] ?? null)]));
    if (trailers) {
      const fields: HeaderField[] = stream.trailers === "pseudo" ? [{ name: ":path", value: "/t" }, { name: "x-t", value: "1" }] : [{ name: "x-trailer", value: "1" }];
      units.push([frame(FRAME.HEADERS, FLAG.END_HEADERS | (stream.trailers === "no-end-stream" ? 0 : FLAG.END_STREAM), stream.id, headerBlock(fields))]);
    }
  }
  if (stream.ending === "reset-before-end" || stream.ending === "reset-after-end") units.push([frame(FRAME.RST_STREAM, 0, stream.id, Buffer.from([0, 0, 0, 8]))]);
  return units;
}

/** Takes units from the streams in the plan's order; a stream's header block waits for those of lower ids. */
function interleave(units: Buffer[][][], order: readonly number[], strays: ConnectionPlan["strays"]): Buffer[] {
  const frames: Buffer[] = [];
  const next = units.map(() => 0);
  let turn = 0;
  for (;;) {
    const ready = units.map((_, index) => index).filter((index) => next[index]! < units[index]!.length && (next[index]! > 0 || units.slice(0, index).every((_, lower) => next[lower]! > 0)));
    if (ready.length === 0) return frames;
    const pick = ready[(order[turn] ?? 0) % ready.length]!;
    frames.push(...units[pick]![next[pick]!]!);
    next[pick]!++;
    for (const [at, extra] of strays) if (at % 8 === turn) frames.push(extra);
    turn++;
  }
}

function mutateFrames(frames: Buffer[], mutations: readonly FrameMutation[]): Buffer[] {
  const out = [...frames];
  for (const { kind, at, value } of mutations) {
    if (out.length === 0) break;
    const index = at % out.length;
    const target = Buffer.from(out[index]!);
    if (kind === "drop") out.splice(index, 1);
    else if (kind === "duplicate") out.splice(index, 0, target);
    else if (kind === "swap" && index + 1 < out.length) [out[index], out[index + 1]] = [out[index + 1]!, out[index]!];
    else if (kind === "type") target[3] = [FRAME.DATA, FRAME.HEADERS, FRAME.CONTINUATION, FRAME.RST_STREAM, FRAME.PRIORITY, 0x05, 0x0a, 0xff][value % 8]!;
    else if (kind === "flags") target[4] = value % 256;
    else if (kind === "stream") target.writeUInt32BE([0, 2, 1, 3, 5, 7, 0x7fffffff, 0x80000001][value % 8]!, 5);
    else if (kind === "length") target.writeUIntBE(Math.max(0, Math.min(0xffffff, target.readUIntBE(0, 3) + [-1, 1, -9, 9, 100, 20000][value % 6]!)), 0, 3);
    if (kind === "type" || kind === "flags" || kind === "stream" || kind === "length") out[index] = target;
  }
  return out;
}

/** The plan as bytes; `caseNo` makes each stream's marker unique in the run. */
export function buildConnection(plan: ConnectionPlan, caseNo: number): BuiltConnection {
  const streams = plan.streams.map(([parts], index): BuiltStream => {
    const id = 1 + 2 * index;
    const marker = `${caseNo}-${id}`;
    return { ...buildStream(parts, marker), id, marker };
  });
  const units = streams.map((stream, index) => streamUnits(stream, plan.streams[index]![1], index === 0 ? 0 : stream.id - 2));
  let frames = [settingsFrame(plan.settings), ...interleave(units, plan.order, plan.strays)];
  const mutations = plan.mutations;
  if (mutations !== null) frames = mutateFrames(frames, mutations.frames);
  let bytes: Buffer = Buffer.concat([PREFACE, ...frames]);
  // The preface stays: what follows a broken one is the HTTP/1.1 fuzz's business.
  if (mutations !== null) bytes = mutate(bytes, mutations.bytes, PREFACE.length);
  return { streams, bytes, mutated: mutations !== null };
}

/** What a frame walk over the client's bytes saw, framing them as nghttp2 does (by their lengths). */
export interface Walk {
  /** HEADERS frames: no more requests than these can reach the app. */
  readonly headers: number;
  /** DATA payload bytes (padding included): no more body than these. */
  readonly dataBytes: number;
  /**
   * Zero bytes that complete a frame cut off at the end, so that a PING after them is read as
   * one: nghttp2 reads and drops frames of an unknown type, or of a refused stream's header
   * block, whatever their length (a mutated one may ask for megabytes).
   */
  readonly filler: Buffer;
}

export function walkFrames(bytes: Buffer): Walk {
  let at = PREFACE.length;
  let headers = 0;
  let dataBytes = 0;
  while (at < bytes.length) {
    // A frame cut off at the end is completed with zeros (its header's missing bytes too).
    const header = at + 9 <= bytes.length ? bytes.subarray(at, at + 9) : Buffer.concat([bytes.subarray(at), Buffer.alloc(at + 9 - bytes.length)]);
    const length = header.readUIntBE(0, 3);
    if (header[3] === FRAME.HEADERS) headers++;
    if (header[3] === FRAME.DATA) dataBytes += length;
    at += 9 + length;
  }
  return { headers, dataBytes, filler: Buffer.alloc(at - bytes.length) };
}
