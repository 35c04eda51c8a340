// The gRPC health probe (the codec's client side, in the product) against hostile apps in raw frames: each answer settles the probe with a reason, nothing escapes, and the next probe is made afresh.
import net, { type AddressInfo } from "node:net";
import t, { type Test } from "tap";
import { GrpcHealthProbe } from "../../src/readiness/grpc-health-probe.js";
import { ManualTimers } from "../helpers/test-doubles.js";
import { FLAG, FRAME, FrameReader, frame, headerBlock, settingsFrame, type HeaderField } from "../relay/http2/h2-frames.js";

const PUSH_PROMISE = 5;
const GRPC_HEAD: HeaderField[] = [
  { name: ":status", value: "200" },
  { name: "content-type", value: "application/grpc" },
];

/** An app that reads the probe's first bytes, then writes `answer` (after its own SETTINGS). */
async function hostileApp(t: Test, answer: () => Buffer[]): Promise<{ port: number; connections: () => number; resets: [number, number][] }> {
  let connections = 0;
  const resets: [number, number][] = [];
  const server = net.createServer((socket) => {
    connections++;
    socket.on("error", () => {});
    const reader = new FrameReader((received) => {
      if (received.type === FRAME.RST_STREAM) resets.push([received.streamId, received.payload.readUInt32BE(0)]);
    });
    let preface = 24;
    socket.on("data", (chunk: Buffer) => {
      const skipped = Math.min(preface, chunk.length);
      preface -= skipped;
      reader.push(chunk.subarray(skipped));
    });
    socket.once("data", () => {
      socket.write(Buffer.concat([settingsFrame([]), ...answer()]));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.address() as AddressInfo).port, connections: () => connections, resets };
}

/** `connection`: the answer ends the connection (the next probe opens a new one); `stream`: it costs that stream only (the connection is kept). */
type Scope = "connection" | "stream";

const cases: [string, () => Buffer[], string, Scope][] = [
  ["a PUSH_PROMISE", () => [frame(PUSH_PROMISE, FLAG.END_HEADERS, 1, Buffer.concat([Buffer.from([0, 0, 0, 2]), headerBlock(GRPC_HEAD)]))], "connection failed", "connection"],
  [
    "a header block in 10 CONTINUATION frames",
    () => [frame(FRAME.HEADERS, 0, 1, headerBlock(GRPC_HEAD).subarray(0, 1)), ...Array.from({ length: 10 }, () => frame(FRAME.CONTINUATION, 0, 1, Buffer.alloc(0)))],
    "connection failed",
    "connection",
  ],
  ["CR in a field value", () => [frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, 1, headerBlock([...GRPC_HEAD, { name: "grpc-status", value: "0\r\nx: y" }]))], "connection failed", "stream"],
  [
    "a header list past 16 KiB",
    () => {
      const block = headerBlock([...GRPC_HEAD, { name: "x-big", value: "a".repeat(16400) }]);
      return [frame(FRAME.HEADERS, FLAG.END_STREAM, 1, block.subarray(0, 16000)), frame(FRAME.CONTINUATION, FLAG.END_HEADERS, 1, block.subarray(16000))];
    },
    "connection failed",
    "stream",
  ],
  ["DATA before any head", () => [frame(FRAME.DATA, FLAG.END_STREAM, 1, Buffer.alloc(5))], "connection failed", "stream"],
  ["GOAWAY before the answer", () => [frame(FRAME.GOAWAY, 0, 0, Buffer.alloc(8))], "connection failed", "connection"],
  ["bytes that are not HTTP/2", () => [Buffer.from("HTTP/1.1 400 Bad Request\r\n\r\n")], "connection failed", "connection"],
  [
    "a body that goes on past 10 KB (and past the window)",
    () => [frame(FRAME.HEADERS, FLAG.END_HEADERS, 1, headerBlock(GRPC_HEAD)), ...Array.from({ length: 8 }, () => frame(FRAME.DATA, 0, 1, Buffer.alloc(16384)))],
    "grpc status 8",
    "stream",
  ],
];

for (const [name, answer, reason, scope] of cases) {
  t.test(`${name}: the probe says "${reason}"; ${scope === "connection" ? "the next probe opens a new connection" : "the connection is kept"}`, async (t) => {
    const app = await hostileApp(t, answer);
    // The app answers once per connection: a second probe on a kept connection meets its silence.
    // Its timeout on hand-moved timers: the first answer never races it, and the second's silence times out at 500 ms exactly.
    const timers = new ManualTimers();
    const probe = new GrpcHealthProbe({ endpoint: { kind: "tcp", host: "127.0.0.1", port: app.port, authority: `127.0.0.1:${app.port}` }, service: "", timeoutMs: 500, timers });
    t.teardown(() => probe.close());
    t.match(await probe.probe(), { ok: false, reason });
    let settled = false;
    const asked = probe.probe().finally(() => (settled = true));
    if (scope === "stream") {
      await timers.pass(499);
      t.equal(settled, false, "499 ms of silence: no answer yet");
      await timers.pass(1);
    }
    const second = await asked;
    if (scope === "connection") {
      t.match(second, { ok: false, reason }, "the same answer again, on a new connection");
      t.equal(app.connections(), 2);
    } else {
      t.match(second, { ok: false, reason: "timeout after 500ms" }, "asked again on the same connection");
      t.equal(app.connections(), 1);
    }
    if (reason === "grpc status 8") t.same(app.resets[0], [1, 8], "the answer past 10 KB is cut with RST_STREAM CANCEL, not read on");
  });
}
