// The frame reader fuzzed: generated frame sequences read in any split give the frames of one read; mutated ones give only CodecErrors, the same whatever the split.
// FRAME_FUZZ_RUNS (default 2000 per property) in every test run, FUZZ_RUNS for `make fuzz`; replay a failure with FRAME_FUZZ_SEED and FRAME_FUZZ_PATH.
import fc from "fast-check";
import t from "tap";
import { CodecError } from "../../src/h2-codec/codec-error.js";
import { FrameReader } from "../../src/h2-codec/frame-reader.js";
import { CLIENT_PREFACE } from "../../src/h2-codec/frame-types.js";
import { cuts, piecesOf } from "../relay/request-fuzz.js";
import { FLAG, FRAME, frame, settingsFrame } from "../relay/http2/h2-frames.js";
import { FrameLog, type FrameEvent } from "./frame-log.js";
import { mutate, mutation } from "./hpack-fuzz-lists.js";
import { fuzzSettings } from "../helpers/fuzz-settings.js";

// All of them in `make test-unit` too: a tenth of the mutations reach too few verdicts for the check below, and the whole file takes 0.3 s.
const { runs, seed, options } = fuzzSettings("FRAME_FUZZ", { fixedSeed: 20261207, defaultRuns: 2000, unitShare: 1 });

const stream = fc.integer({ min: 1, max: 9 }).map((n) => n * 2 - 1);
const payload = (maxLength: number) => fc.uint8Array({ maxLength }).map((bytes) => Buffer.from(bytes));
const u32 = (value: number) => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(value >>> 0);
  return bytes;
};
const padded = (body: Buffer, padding: number | null) => (padding === null ? body : Buffer.concat([Buffer.from([padding]), body, Buffer.alloc(padding)]));

const dataFrame = fc
  .record({ stream, body: payload(300), end: fc.boolean(), padding: fc.option(fc.integer({ min: 0, max: 20 })) })
  .map(({ stream, body, end, padding }) => frame(FRAME.DATA, (end ? FLAG.END_STREAM : 0) | (padding === null ? 0 : FLAG.PADDED), stream, padded(body, padding)));
/** A header block in 1 to 9 frames (HEADERS, then CONTINUATIONs), with padding and priority fields on the HEADERS. */
const headerFrames = fc
  .record({ stream, block: payload(200), end: fc.boolean(), splits: fc.array(fc.nat(), { maxLength: 8 }), padding: fc.option(fc.integer({ min: 0, max: 10 })), priority: fc.option(fc.nat()) })
  .map(({ stream, block, end, splits, padding, priority }) => {
    const points = [0, ...splits.map((at) => at % (block.length + 1)).sort((a, b) => a - b), block.length];
    const fragments = points.slice(1).map((to, i) => block.subarray(points[i], to));
    return Buffer.concat(
      fragments.map((fragment, i) => {
        const last = i === fragments.length - 1 ? FLAG.END_HEADERS : 0;
        if (i > 0) return frame(FRAME.CONTINUATION, last, stream, fragment);
        const body = priority === null ? fragment : Buffer.concat([u32(priority), Buffer.from([16]), fragment]);
        const flags = last | (end ? FLAG.END_STREAM : 0) | (padding === null ? 0 : FLAG.PADDED) | (priority === null ? 0 : FLAG.PRIORITY);
        return frame(FRAME.HEADERS, flags, stream, padded(body, padding));
      }),
    );
  });
const otherFrame = fc.oneof(
  fc.record({ stream, on: fc.nat() }).map(({ stream, on }) => frame(FRAME.PRIORITY, 0, stream, Buffer.concat([u32(on), Buffer.from([1])]))),
  fc.record({ stream, code: fc.nat(13) }).map(({ stream, code }) => frame(FRAME.RST_STREAM, 0, stream, u32(code))),
  fc.array(fc.tuple(fc.constantFrom(1, 2, 3, 4, 6, 9), fc.nat(1)), { maxLength: 4 }).map((entries) => settingsFrame(entries)),
  fc.constant(frame(FRAME.SETTINGS, FLAG.ACK, 0)),
  fc.record({ opaque: payload(8).map((bytes) => Buffer.concat([bytes, Buffer.alloc(8 - bytes.length)])), ack: fc.boolean() }).map(({ opaque, ack }) => frame(FRAME.PING, ack ? FLAG.ACK : 0, 0, opaque)),
  fc.record({ last: fc.nat(), code: fc.nat(13), debug: payload(20) }).map(({ last, code, debug }) => frame(FRAME.GOAWAY, 0, 0, Buffer.concat([u32(last), u32(code), debug]))),
  fc.record({ stream: fc.oneof(fc.constant(0), stream), increment: fc.nat() }).map(({ stream, increment }) => frame(FRAME.WINDOW_UPDATE, 0, stream, u32(increment))),
  fc.record({ type: fc.integer({ min: 10, max: 255 }), flags: fc.nat(255), stream: fc.nat(20), body: payload(40) }).map(({ type, flags, stream, body }) => frame(type, flags, stream, body)),
);
/** A connection as a client sends it: the preface, SETTINGS, then any frames. */
const connection = fc
  .array(fc.oneof({ weight: 3, arbitrary: dataFrame }, { weight: 3, arbitrary: headerFrames }, { weight: 3, arbitrary: otherFrame }), { maxLength: 12 })
  .map((frames) => Buffer.concat([CLIENT_PREFACE, settingsFrame([[4, 65535]]), ...frames]));

/** What the reader made of `pieces`: the events, and the error code it stopped with (any other throw escapes and fails the property). */
function readPieces(pieces: readonly Buffer[]): { events: FrameEvent[]; code?: string } {
  const log = new FrameLog();
  const reader = new FrameReader(log, { expectPreface: true });
  try {
    for (const piece of pieces) reader.push(piece);
  } catch (error) {
    if (error instanceof CodecError) return { events: log.events, code: error.code };
    throw error;
  }
  return { events: log.events };
}

t.comment(`seed ${seed}, ${runs} runs per property`);

t.test("valid sequences: any split gives the frames of one read, and no error", async (t) => {
  fc.assert(
    fc.property(connection, cuts, (bytes, cutAt) => {
      const whole = readPieces([bytes]);
      if (whole.code !== undefined) throw new Error(`a valid sequence refused: ${whole.code}`);
      const split = readPieces(piecesOf(bytes, cutAt));
      if (JSON.stringify(split) !== JSON.stringify(whole)) throw new Error(`split reading differs:\n${JSON.stringify(split)}\n${JSON.stringify(whole)}`);
    }),
    options,
  );
  t.pass("agreed");
});

t.test("mutated sequences: only CodecErrors, and the same verdict whatever the split", async (t) => {
  const codes = new Map<string, number>();
  fc.assert(
    fc.property(connection, fc.array(mutation, { minLength: 1, maxLength: 3 }), cuts, (bytes, changes, cutAt) => {
      const mutated = changes.reduce<Buffer>((out, change) => mutate(out, change), bytes);
      const whole = readPieces([mutated]);
      const split = readPieces(piecesOf(mutated, cutAt));
      if (JSON.stringify(split) !== JSON.stringify(whole)) throw new Error(`split reading differs:\n${JSON.stringify(split)}\n${JSON.stringify(whole)}`);
      codes.set(whole.code ?? "accepted", (codes.get(whole.code ?? "accepted") ?? 0) + 1);
    }),
    options,
  );
  t.comment(`verdicts: ${JSON.stringify(Object.fromEntries(codes))}`);
  t.ok((codes.get("accepted") ?? 0) > 0 && codes.size > 3, "mutations reach several verdicts");
});
