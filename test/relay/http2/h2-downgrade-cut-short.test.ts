// h2 streams cut short (reset, cut off with their connection, malformed after their body) reach an HTTP/1.1 app never as a whole request (found by h2-frame-fuzz.test.ts).
import t, { type Test } from "tap";
import { startTestDaemon, type TestDaemon } from "../../helpers/in-process-daemon.js";
import { startUpstream, type TestUpstream } from "../../helpers/upstream.js";
import { exchange } from "../raw-exchange.js";
import { FLAG, FRAME, PREFACE, frame, headerBlock, settingsFrame, type HeaderField } from "./h2-frames.js";
import { RawH2Client } from "./h2-raw-client.js";

const BOUND_MS = 5_000;
const CANCEL = Buffer.from([0, 0, 0, 8]);

function request(method: string, path: string, fields: HeaderField[] = []): Buffer {
  return headerBlock([{ name: ":method", value: method }, { name: ":scheme", value: "http" }, { name: ":path", value: path }, { name: ":authority", value: "app.test" }, ...fields]);
}

/** An HTTP/1.1 request through the proxy, answered: what the app was sent before it, it has read (the repo's barrier, test/relay/upstream-barrier.ts). */
async function barrier(daemon: TestDaemon): Promise<void> {
  const result = await exchange(daemon.port, { pieces: [Buffer.from("GET /barrier HTTP/1.1\r\nHost: a\r\n\r\n")], responses: 1, then: "half-close", timeoutMs: BOUND_MS });
  if (result.finals[0] !== 200) throw new Error("the barrier was not answered");
}

async function setUp(t: Test): Promise<{ app: TestUpstream; daemon: TestDaemon; client: RawH2Client }> {
  const app = await startUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", app.url, "--upstream-protocol", "http1"]);
  const client = await RawH2Client.connect(daemon.port);
  t.teardown(() => client.destroy());
  // A request answered first leaves a connected upstream connection in the pool: the next
  // stream's head goes out at once, as it does on a busy proxy.
  await client.write(Buffer.concat([PREFACE, settingsFrame([]), frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, 1, request("GET", "/warm"))]));
  if (!(await client.until((view) => view.streams.get(1)?.ended === true, BOUND_MS))) throw new Error("/warm not answered");
  return { app, daemon, client };
}

/** Each: the frames of stream 3 (after /warm on stream 1), then the client closes its connection, or nghttp2 resets the stream, or nothing. */
const CASES: ReadonlyArray<{ name: string; frames: Buffer[]; then: "close" | "reset" | "nothing" }> = [
  { name: "HEADERS, then RST_STREAM", frames: [frame(FRAME.HEADERS, FLAG.END_HEADERS, 3, request("POST", "/cut")), frame(FRAME.RST_STREAM, 0, 3, CANCEL)], then: "nothing" },
  { name: "a chunked body, then the connection's close", frames: [frame(FRAME.HEADERS, FLAG.END_HEADERS, 3, request("POST", "/cut")), frame(FRAME.DATA, 0, 3, Buffer.from("abc"))], then: "close" },
  { name: "a HEAD without END_STREAM, then the connection's close", frames: [frame(FRAME.HEADERS, FLAG.END_HEADERS, 3, request("HEAD", "/cut"))], then: "close" },
  {
    name: "all of a content-length body, then RST_STREAM",
    frames: [frame(FRAME.HEADERS, FLAG.END_HEADERS, 3, request("POST", "/cut", [{ name: "content-length", value: "3" }])), frame(FRAME.DATA, 0, 3, Buffer.from("abc")), frame(FRAME.RST_STREAM, 0, 3, CANCEL)],
    then: "nothing",
  },
  {
    name: "all of a content-length body, then the connection's close",
    frames: [frame(FRAME.HEADERS, FLAG.END_HEADERS, 3, request("POST", "/cut", [{ name: "content-length", value: "3" }])), frame(FRAME.DATA, 0, 3, Buffer.from("abc"))],
    then: "close",
  },
  {
    name: "all of a content-length body, then trailers with a pseudo-header (malformed)",
    frames: [frame(FRAME.HEADERS, FLAG.END_HEADERS, 3, request("POST", "/cut", [{ name: "content-length", value: "3" }])), frame(FRAME.DATA, 0, 3, Buffer.from("abc")), frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, 3, headerBlock([{ name: ":path", value: "/t" }]))],
    then: "reset",
  },
  {
    name: "a content-length body, then one DATA frame more than it",
    frames: [frame(FRAME.HEADERS, FLAG.END_HEADERS, 3, request("POST", "/cut", [{ name: "content-length", value: "3" }])), frame(FRAME.DATA, 0, 3, Buffer.from("abc")), frame(FRAME.DATA, FLAG.END_STREAM, 3, Buffer.from("d"))],
    then: "reset",
  },
  {
    name: "content-length 0 without END_STREAM, then a DATA frame",
    frames: [frame(FRAME.HEADERS, FLAG.END_HEADERS, 3, request("POST", "/cut", [{ name: "content-length", value: "0" }])), frame(FRAME.DATA, FLAG.END_STREAM, 3, Buffer.from("x"))],
    then: "reset",
  },
];

for (const { name, frames, then } of CASES) {
  t.test(`${name}: the app never gets a whole request`, async (t) => {
    const { app, daemon, client } = await setUp(t);
    await client.write(Buffer.concat(frames));
    if (then === "close") client.destroy();
    // node 24's node:http2 ends the whole connection there (README, Limits): either is a refusal.
    if (then === "reset") t.ok(await client.until((view) => view.streams.get(3)?.rstCode !== undefined || view.goaway !== undefined, BOUND_MS), "nghttp2 refuses the stream");
    await barrier(daemon);
    t.same(
      app.received.map((received) => received.url),
      ["/warm", "/barrier"],
      "only /warm and the barrier came whole",
    );
  });
}

t.test("the drain's end cutting off a HEAD without END_STREAM: the app never gets a whole request", async (t) => {
  const { app, daemon, client } = await setUp(t);
  // The PING's ack: the proxy has read the HEADERS, and sent what it could of the head.
  await client.write(Buffer.concat([frame(FRAME.HEADERS, FLAG.END_HEADERS, 3, request("HEAD", "/cut")), frame(FRAME.PING, 0, 0, Buffer.from("cut-head"))]));
  t.ok(await client.until((view) => view.pingAcks.length > 0, BOUND_MS), "PING acked");
  // What the shutdown does at the end of --shutdown-timeout: node closes the streams without an error code.
  daemon.server.closeAllConnections();
  t.ok(await client.until((view) => view.closed, BOUND_MS), "the connection closed");
  await barrier(daemon);
  t.same(
    app.received.map((received) => received.url),
    ["/warm", "/barrier"],
    "only /warm and the barrier came whole",
  );
});

t.test("a request reset in the connection's first read is not forwarded (once, it went without the client's address)", async (t) => {
  const app = await startUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", app.url, "--upstream-protocol", "http1"]);
  // A connected upstream connection in the pool: a head would go out at once.
  await barrier(daemon);
  const client = await RawH2Client.connect(daemon.port);
  t.teardown(() => client.destroy());
  // node:http2 emits 'stream' a tick after the HEADERS: for the first read, after the RST_STREAM.
  await client.write(
    Buffer.concat([
      PREFACE,
      settingsFrame([]),
      frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, 1, request("GET", "/reset", [{ name: "x-forwarded-for", value: "203.0.113.7" }])),
      frame(FRAME.RST_STREAM, 0, 1, CANCEL),
      frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, 3, request("GET", "/after")),
    ]),
  );
  t.ok(await client.until((view) => view.streams.get(3)?.ended === true, BOUND_MS), "the next stream is answered");
  await barrier(daemon);
  t.same(
    app.received.map((received) => [received.url, received.headers["x-forwarded-for"]]),
    [["/barrier", "127.0.0.1"], ["/after", "127.0.0.1"], ["/barrier", "127.0.0.1"]],
    "the reset GET never reached the app (it did, with X-Forwarded-For 203.0.113.7 and an empty address after it)",
  );
});

t.test("the same requests, finished, reach the app whole", async (t) => {
  const { app, daemon, client } = await setUp(t);
  const length = [{ name: "content-length", value: "3" }];
  await client.write(
    Buffer.concat([
      frame(FRAME.HEADERS, FLAG.END_HEADERS, 3, request("POST", "/chunked")),
      frame(FRAME.DATA, FLAG.END_STREAM, 3, Buffer.from("abc")),
      frame(FRAME.HEADERS, FLAG.END_HEADERS, 5, request("POST", "/length", length)),
      frame(FRAME.DATA, 0, 5, Buffer.from("abc")),
      frame(FRAME.DATA, FLAG.END_STREAM, 5, Buffer.alloc(0)),
      frame(FRAME.HEADERS, FLAG.END_HEADERS, 7, request("POST", "/trailers", length)),
      frame(FRAME.DATA, 0, 7, Buffer.from("abc")),
      frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, 7, headerBlock([{ name: "x-sum", value: "1" }])),
      frame(FRAME.HEADERS, FLAG.END_HEADERS, 9, request("POST", "/empty", [{ name: "content-length", value: "0" }])),
      frame(FRAME.DATA, FLAG.END_STREAM, 9, Buffer.alloc(0)),
    ]),
  );
  t.ok(await client.until((view) => [3, 5, 7, 9].every((id) => view.streams.get(id)?.ended === true), BOUND_MS), "all answered");
  t.same([3, 5, 7, 9].map((id) => client.streams.get(id)?.status), [200, 200, 200, 200]);
  await barrier(daemon);
  t.same(
    app.received.map((received) => [received.url, received.body.toString()]).sort(),
    [["/barrier", ""], ["/chunked", "abc"], ["/empty", ""], ["/length", "abc"], ["/trailers", "abc"], ["/warm", ""]],
  );
});
