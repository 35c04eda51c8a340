// The frame writer's output read back by the frame reader: every builder, HEADERS split into CONTINUATION, DATA split and large payloads referenced, not copied.
import t from "tap";
import { FrameReader } from "../../src/h2-codec/frame-reader.js";
import { FrameWriter } from "../../src/h2-codec/frame-writer.js";
import { DECODED, HpackDecoder } from "../../src/h2-codec/hpack-decoder.js";
import { HpackEncoder } from "../../src/h2-codec/hpack-encoder.js";
import { FrameLog } from "./frame-log.js";

/** Reads what the writer flushed, one frame header at a time, for the frame types and lengths. */
function frameHeaders(pieces: Buffer[]): [type: number, flags: number, streamId: number, length: number][] {
  const bytes = Buffer.concat(pieces);
  const frames: [number, number, number, number][] = [];
  for (let at = 0; at < bytes.length; ) {
    const length = bytes.readUIntBE(at, 3);
    frames.push([bytes[at + 3] as number, bytes[at + 4] as number, bytes.readUInt32BE(at + 5), length]);
    at += 9 + length;
  }
  return frames;
}

t.test("every builder, read back", async (t) => {
  const writer = new FrameWriter();
  writer.settings([[1, 0], [4, 1 << 20]]);
  writer.settingsAck();
  writer.ping(Buffer.from("0102030405060708", "hex"), true);
  writer.windowUpdate(0, 65535);
  writer.rstStream(3, 8);
  writer.goaway(7, 11, Buffer.from("bye"));
  writer.data(1, Buffer.from("hello"), true);
  const log = new FrameLog();
  new FrameReader(log).push(Buffer.concat(writer.flush()));
  t.strictSame(log.events, [
    ["settings", 0, "000100000000000400100000"],
    ["settings-ack", 0],
    ["ping", 0, "0102030405060708", true],
    ["window-update", 0, 65535],
    ["rst", 3, 8],
    ["goaway", 0, 7, 11, "627965"],
    ["data", 1, "68656c6c6f", true, 5],
  ]);
  t.strictSame(writer.flush(), [], "nothing left after a flush");
});

t.test("a header block past MAX_FRAME_SIZE goes as HEADERS and CONTINUATIONs, nothing between", async (t) => {
  const writer = new FrameWriter();
  const encoder = new HpackEncoder();
  const fields = [":method", "GET", ":path", "/", ...Array.from({ length: 6 }, (_, i) => [`x-big-${i}`, String(i).repeat(9000)]).flat()];
  writer.settings([]);
  writer.headers(1, fields, true, encoder);
  writer.ping(Buffer.alloc(8), false);
  const pieces = writer.flush();
  const frames = frameHeaders(pieces);
  t.strictSame(
    frames.map(([type, flags]) => [type, flags]),
    [[4, 0], [1, 0x1], [9, 0], [9, 0x4], [6, 0]],
    "SETTINGS, HEADERS (END_STREAM), CONTINUATION, CONTINUATION (END_HEADERS), PING",
  );
  t.ok(frames.slice(1, 4).every(([, , stream, length]) => stream === 1 && length <= 16384));
  const decoder = new HpackDecoder({ maxHeaderListSize: 1 << 20 });
  const decoded: string[] = [];
  const log = new FrameLog();
  log.onHeaders = (streamId, source, start, end, endStream) => {
    t.equal(streamId, 1);
    t.ok(endStream);
    t.equal(decoder.decode(source, start, end, decoded), DECODED.OK);
  };
  new FrameReader(log).push(Buffer.concat(pieces));
  t.strictSame(decoded, fields);
});

t.test("DATA split at MAX_FRAME_SIZE; large payloads referenced, small ones copied", async (t) => {
  const writer = new FrameWriter();
  writer.maxFrameSize = 20000;
  const large = Buffer.alloc(50000, 1);
  const small = Buffer.from("tiny");
  writer.data(1, small, false);
  writer.data(1, large, true);
  writer.windowUpdate(1, 10);
  t.equal(writer.pendingLength, 9 + 4 + 3 * 9 + 50000 + 9 + 4, "pending octets: frame headers, the small payload, the large one, WINDOW_UPDATE");
  const pieces = writer.flush();
  t.equal(writer.pendingLength, 0);
  t.equal(pieces.filter((piece) => piece.buffer === large.buffer).length, 3, "the large payload's three frames are views of it");
  t.notOk(pieces.some((piece) => piece.buffer === small.buffer), "the small one was copied");
  t.strictSame(
    frameHeaders(pieces).map(([type, flags, , length]) => [type, flags, length]),
    [[0, 0, 4], [0, 0, 20000], [0, 0, 20000], [0, 1, 10000], [8, 0, 4]],
  );
});

t.test("a flushed buffer is never written over", async (t) => {
  const writer = new FrameWriter();
  const held: { piece: Buffer; copy: Buffer }[] = [];
  for (let i = 0; i < 2000; i++) {
    writer.ping(Buffer.alloc(8, i & 0xff), false);
    if (i % 7 === 0) {
      for (const piece of writer.flush()) held.push({ piece, copy: Buffer.from(piece) });
    }
  }
  t.ok(held.every(({ piece, copy }) => piece.equals(copy)), "every handed-out buffer still holds what it held");
});
