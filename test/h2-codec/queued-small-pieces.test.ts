// Memory follows octets, never pieces, in a stream's output queue: small DATA pieces left waiting for the peer's window are copied out of the socket reads they came in, and go out whole and in order.
import t from "tap";
import { ConnectionOutput } from "../../src/h2-codec/connection-output.js";
import { H2Stream } from "../../src/h2-codec/h2-stream.js";
import { HoldingTransport } from "./holding-transport.js";


/** The memory the queue keeps alive: each distinct backing store its pieces are views of, counted once. */
function keptBytes(queue: readonly Buffer[]): number {
  const stores = new Set<ArrayBufferLike>();
  for (const piece of queue) stores.add(piece.buffer);
  return [...stores].reduce((sum, store) => sum + store.byteLength, 0);
}

/** A 1-octet piece as a relay hands it on: a view into a 64 KiB socket read of its own. */
function octetOfARead(value: number): Buffer {
  const read = Buffer.allocUnsafeSlow(64 * 1024);
  read[100] = value;
  return read.subarray(100, 101);
}

/** DATA payloads of `streamId` in the frames written, in order. */
function payloads(written: readonly Buffer[], streamId: number): Buffer {
  const wire = Buffer.concat(written);
  const parts: Buffer[] = [];
  for (let at = 0; at + 9 <= wire.length; ) {
    const length = wire.readUIntBE(at, 3);
    if (wire[at + 3] === 0 && (wire.readUInt32BE(at + 5) & 0x7fffffff) === streamId) parts.push(wire.subarray(at + 9, at + 9 + length));
    at += 9 + length;
  }
  return Buffer.concat(parts);
}

t.test("1-octet pieces waiting on a closed window keep a few bytes per octet, not their reads (issue 52)", async (t) => {
  const transport = new HoldingTransport();
  const output = new ConnectionOutput(transport, { endedLocally: () => {}, writable: () => {} });
  const streams = Array.from({ length: 100 }, (_, index) => new H2Stream(1 + 2 * index, 0, 65_535));
  const pieces = 50;
  let sent = 0;
  for (let turn = 0; turn < pieces; turn++) for (const stream of streams) if (output.data(stream, octetOfARead(turn), false)) sent++;
  t.equal(sent, 0, "every piece waits for window");
  const octets = streams.length * pieces;
  const kept = streams.reduce((sum, stream) => sum + keptBytes(stream.queue), 0);
  t.comment(`${octets} octets queued in 1-octet pieces keep ${kept} bytes of buffers (${(kept / octets).toFixed(1)} per octet)`);
  // Each piece as a view kept its 64 KiB read: 65,536 bytes per octet. Copied, each stream's 50 octets share one 256-byte buffer.
  t.ok(kept / octets <= 8, `${(kept / octets).toFixed(1)} bytes per octet, at most 8`);
  t.ok(streams.every((stream) => stream.queue.length <= 1), "each stream's octets wait as one piece");
  for (const stream of streams) {
    stream.sendWindow = 65_535;
    output.streamWindowGrew(stream);
  }
  output.sendWindow = 1 << 20;
  output.sendBlocked();
  output.flush();
  const expected = Buffer.from(Array.from({ length: pieces }, (_, turn) => turn));
  t.ok(streams.every((stream) => payloads(transport.written.map(({ copy }) => copy), stream.id).equals(expected)), "every stream's octets went out whole and in order");
});

t.test("a large piece waits as the caller's own view: bulk data is not copied", async (t) => {
  const output = new ConnectionOutput(new HoldingTransport(), { endedLocally: () => {}, writable: () => {} });
  const stream = new H2Stream(1, 0, 65_535);
  const big = Buffer.alloc(16_384, 7);
  output.data(stream, big, false);
  t.equal(stream.queue[0], big, "the same Buffer waits");
});
