// A request head past the 16 KiB list: answered 431 on its stream as the relay does today, the connection and its other streams unharmed.
import t from "tap";
import { HpackDecoder } from "../../src/h2-codec/hpack-decoder.js";
import { FLAG, FRAME, PREFACE, frame, headerBlock, settingsFrame } from "../relay/http2/h2-frames.js";
import { runCase } from "./session-client.js";
import { startEchoServer } from "./codec-echo-server.js";

const head = (extra: number) =>
  headerBlock([
    { name: ":method", value: "GET" },
    { name: ":scheme", value: "http" },
    { name: ":path", value: "/" },
    { name: ":authority", value: "a.test" },
    { name: "x-big", value: "b".repeat(extra) },
  ]);

/** A block split in two frames (each under the 16,384 octets a frame may carry by default). */
function request(streamId: number, block: Buffer): Buffer {
  const half = Math.ceil(block.length / 2);
  return Buffer.concat([frame(FRAME.HEADERS, FLAG.END_STREAM, streamId, block.subarray(0, half)), frame(FRAME.CONTINUATION, FLAG.END_HEADERS, streamId, block.subarray(half))]);
}

// Found by the session differential (class "oversized head"): node:http2's listener answers a list
// past 16 KiB with 431 (h2-listener.ts), and the codec has onOversizedHead for it; but the frame
// reader capped a block at max(maxHeaderListSize, 16384) octets, so a literal list of 17,000 octets
// ended the whole connection with GOAWAY ENHANCE_YOUR_CALM before the decoder could say LIST_TOO_LARGE.
t.test("a 17,000-octet field: 431 on the stream, the next request still answered", async (t) => {
  const server = await startEchoServer();
  t.teardown(() => server.close());
  const bytes = Buffer.concat([PREFACE, settingsFrame([]), request(1, head(17_000)), request(3, head(10))]);
  const statuses = new Map<number, string>();
  const decoder = new HpackDecoder();
  const answer = await runCase(server.port, [bytes], 2_000, (streamId, block) => {
    const fields: string[] = [];
    decoder.decode(block, 0, block.length, fields);
    statuses.set(streamId, fields[1] ?? "");
  });
  t.equal(answer.goaway, undefined, "no GOAWAY");
  t.equal(statuses.get(1), "431", "the large head is answered 431");
  t.equal(statuses.get(3), "200", "the next request on the connection is answered");
});
