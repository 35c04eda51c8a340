// A flood of 1-octet DATA frames through the codec's connection allocates almost nothing per frame: no Buffer view and no array per frame (issue 52's soak: that garbage was most of what a flood cost).
import { Session } from "node:inspector/promises";
import t from "tap";
import { H2Connection, type H2ConnectionHandler, type H2Transport } from "../../src/h2-codec/h2-connection.js";
import type { H2Stream } from "../../src/h2-codec/h2-stream.js";
import { FLAG, FRAME, PREFACE, frame, headerBlock, settingsFrame } from "../relay/http2/h2-frames.js";

/** Frames per socket read: 60,000 octets on the wire, about what one read of a flood brings. */
const FRAMES_PER_READ = 6_000;
/** Reads measured, after as many again to let the code settle. */
const READS = 200;
/**
 * Bytes of V8 heap allocated per frame at most. A view per frame (Buffer.subarray) was ~100
 * bytes, the frame header's array destructurings ~40 more (144 measured before the fix, ~0
 * after): the bound sits far from both, whatever the sampling's error.
 */
const BOUND_PER_FRAME = 16;

/** Takes every write and holds none of it. */
const discarding: H2Transport = {
  writableLength: 0,
  write: () => true,
  cork() {},
  uncork() {},
  pause() {},
  resume() {},
  end() {},
  destroy() {},
};

t.test("1-octet DATA frames: what the connection allocates per frame, the handler taking each piece by its bounds", async (t) => {
  let octets = 0;
  let faults = 0;
  const ignore = (): void => {};
  let connection: H2Connection | undefined;
  const handler: H2ConnectionHandler = {
    onHead: ignore,
    onOversizedHead: ignore,
    onData(stream: H2Stream, _source: Buffer, start: number, end: number) {
      octets += end - start;
      connection!.consume(stream, end - start);
    },
    onTrailers: ignore,
    onReset: ignore,
    onStreamEnd: ignore,
    onWritable: ignore,
    onGoaway: ignore,
    onClose: ignore,
    onFault: () => void faults++,
  };
  connection = new H2Connection(discarding, handler, { role: "server", clock: () => 0 });
  const head = headerBlock([
    { name: ":method", value: "POST", form: "indexed" },
    { name: ":scheme", value: "http", form: "indexed" },
    { name: ":path", value: "/upload" },
    { name: ":authority", value: "proxy.test", form: "indexed-name" },
  ]);
  connection.receive(Buffer.concat([PREFACE, settingsFrame([]), frame(FRAME.HEADERS, FLAG.END_HEADERS, 1, head)]));
  const read = Buffer.concat(Array.from({ length: FRAMES_PER_READ }, () => frame(FRAME.DATA, 0, 1, Buffer.from([0x61]))));
  for (let index = 0; index < READS; index++) connection.receive(read);

  const session = new Session();
  session.connect();
  t.teardown(() => session.disconnect());
  // Every allocation sampled, collected or not: garbage is what is measured.
  await session.post("HeapProfiler.startSampling", { samplingInterval: 512, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  for (let index = 0; index < READS; index++) connection.receive(read);
  const { profile } = await session.post("HeapProfiler.stopSampling");
  type Node = { selfSize: number; children: Node[] };
  const total = (node: Node): number => node.children.reduce((sum, child) => sum + total(child), node.selfSize);
  const perFrame = total(profile.head as Node) / (READS * FRAMES_PER_READ);
  t.comment(`${READS * FRAMES_PER_READ} frames: ~${perFrame.toFixed(1)} bytes allocated per frame`);
  t.equal(octets, 2 * READS * FRAMES_PER_READ, "every octet handed on");
  t.equal(faults, 0);
  t.ok(perFrame < BOUND_PER_FRAME, `~${perFrame.toFixed(1)} bytes per frame, under ${BOUND_PER_FRAME}`);
});
