// The codec's connection, server and client side, on an in-memory transport: stream states, flow control per hop, §8 message checks, flood budgets, faults.
import t from "tap";
import { AdvanceBudget } from "../../src/h2-codec/advance-budget.js";
import { H2_ERROR } from "../../src/h2-codec/codec-error.js";
import { FLAG, FRAME, PREFACE, frame, headerBlock, settingsFrame, type HeaderField } from "../relay/http2/h2-frames.js";
import { ConnectionUnderTest } from "./connection-under-test.js";

const GET: HeaderField[] = [
  { name: ":method", value: "GET" },
  { name: ":scheme", value: "http" },
  { name: ":path", value: "/a" },
  { name: ":authority", value: "example" },
];
const POST: HeaderField[] = [{ name: ":method", value: "POST" }, ...GET.slice(1)];

const headers = (streamId: number, fields: HeaderField[], endStream = true, extraFlags = 0) =>
  frame(FRAME.HEADERS, FLAG.END_HEADERS | (endStream ? FLAG.END_STREAM : 0) | extraFlags, streamId, headerBlock(fields));
const data = (streamId: number, text: string | Buffer, endStream = false) => frame(FRAME.DATA, endStream ? FLAG.END_STREAM : 0, streamId, typeof text === "string" ? Buffer.from(text) : text);
/** `octets` of body as DATA frames of at most 16 KiB (the default SETTINGS_MAX_FRAME_SIZE). */
const bulk = (streamId: number, octets: number) => {
  const frames: Buffer[] = [];
  for (let left = octets; left > 0; left -= 16384) frames.push(data(streamId, Buffer.alloc(Math.min(left, 16384))));
  return Buffer.concat(frames);
};
const rst = (streamId: number, code: number) => frame(FRAME.RST_STREAM, 0, streamId, u32(code));
const windowUpdate = (streamId: number, increment: number) => frame(FRAME.WINDOW_UPDATE, 0, streamId, u32(increment));
const priority = (streamId: number, dependsOn: number) => frame(FRAME.PRIORITY, 0, streamId, Buffer.from([0, 0, 0, dependsOn, 16]));
const ping = () => frame(FRAME.PING, 0, 0, Buffer.from("12345678"));
function u32(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32BE(value >>> 0);
  return buffer;
}

/** A server connection past the preface and SETTINGS exchange. */
function server(options: ConstructorParameters<typeof ConnectionUnderTest>[1] = {}): ConnectionUnderTest {
  const under = new ConnectionUnderTest("server", options);
  under.receive(PREFACE, settingsFrame([]));
  return under;
}

t.test("the server's first frames: SETTINGS (100 streams, no push), the connection window raised, the client's SETTINGS acknowledged", async (t) => {
  const under = server();
  await under.settle();
  const [settings, windowUp, ack] = under.sent();
  t.equal(settings?.type, FRAME.SETTINGS);
  t.equal(settings?.flags, 0);
  const entries = new Map<number, number>();
  for (let at = 0; at < settings!.payload.length; at += 6) entries.set(settings!.payload.readUInt16BE(at), settings!.payload.readUInt32BE(at + 2));
  t.equal(entries.get(3), 100, "MAX_CONCURRENT_STREAMS");
  t.equal(entries.get(2), 0, "ENABLE_PUSH");
  t.equal(entries.get(6), 16384, "MAX_HEADER_LIST_SIZE");
  t.equal(windowUp?.type, FRAME.WINDOW_UPDATE);
  t.equal(windowUp?.payload.readUInt32BE(0), 1024 * 1024 - 65535);
  t.equal(ack?.type, FRAME.SETTINGS);
  t.equal(ack?.flags, FLAG.ACK);
});

t.test("every socket read is counted whole, frame headers included: 1-octet DATA frames bring ten octets of read buffer per octet of body", async (t) => {
  const counted: number[] = [];
  const under = new ConnectionUnderTest("server", { reads: { streamed: (bytes) => void counted.push(bytes) } });
  const opening = Buffer.concat([PREFACE, settingsFrame([])]);
  under.receive(opening);
  const flood = Buffer.concat([headers(1, POST, false), ...Array.from({ length: 100 }, () => data(1, "a"))]);
  under.receive(flood);
  t.same(counted, [opening.length, flood.length], "one count per read, of its whole length");
  t.equal(
    under.events.filter((event) => event.kind === "data").reduce((sum, event) => sum + (event.kind === "data" ? event.data.length : 0), 0),
    100,
    "the body: a tenth of what was read",
  );
});

t.test("a request, its body and trailers reach the user in order; the answer goes out as HEADERS and DATA", async (t) => {
  const under = server();
  under.receive(headers(1, POST, false), data(1, "hello "), data(1, "world"), frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, 1, headerBlock([{ name: "x-sum", value: "1" }])));
  t.same(
    under.events.map((event) => event.kind),
    ["head", "data", "data", "trailers"],
  );
  const stream = under.streams.get(1)!;
  under.connection.respond(stream, [":status", "200"], false);
  t.equal(under.connection.sendData(stream, Buffer.from("ok"), true), true);
  await under.settle();
  const out = under.sent().filter((frame) => frame.streamId === 1);
  t.same(
    out.map((frame) => [frame.type, frame.flags]),
    [
      [FRAME.HEADERS, FLAG.END_HEADERS],
      [FRAME.DATA, FLAG.END_STREAM],
    ],
  );
  t.same(under.decodeHeaders(out[0]!), [":status", "200"]);
  t.equal(under.connection.openStreams, 0, "both sides ended: the stream is gone");
});

t.test("a stream lets go of its user once its last event is told: completed or reset, the user is the handler's to drop", async (t) => {
  const under = server();
  const users = new Map<number, unknown>();
  under.onHead = (stream) => {
    stream.user = { exchange: stream.id };
    users.set(stream.id, stream.user);
  };
  under.receive(headers(1, GET), headers(3, POST, false));
  const completed = under.streams.get(1)!;
  const reset = under.streams.get(3)!;
  t.same(completed.user, users.get(1), "held while the stream is open");
  under.connection.respond(completed, [":status", "200"], true);
  t.equal(completed.user, undefined, "completed: let go after onStreamEnd");
  under.receive(rst(3, H2_ERROR.CANCEL));
  t.equal(reset.user, undefined, "reset by the peer: let go after onReset");
  t.same(
    under.events.filter((event) => event.kind === "end" || event.kind === "reset").map((event) => event.kind),
    ["end", "reset"],
    "each was told",
  );
});

t.test("an answer complete before its request: the stream stays half-closed (local) until the request ends, its flow control still kept", async (t) => {
  const under = server();
  under.onHead = (stream) => under.connection.respond(stream, [":status", "413"], true);
  under.receive(headers(1, POST, false), data(1, "more"));
  await under.settle();
  t.same(under.resets(), [], "no RST_STREAM NO_ERROR");
  t.equal(under.connection.openStreams, 1);
  under.receive(windowUpdate(1, 0x7fffffff));
  t.same(under.resets(), [[1, H2_ERROR.FLOW_CONTROL_ERROR]], "a window overflow on it is still its error (h2spec 6.9.1/3)");
  const ends = server();
  ends.onHead = (stream) => ends.connection.respond(stream, [":status", "413"], true);
  ends.receive(headers(1, POST, false), data(1, "more", true));
  t.same(
    ends.events.map((event) => event.kind),
    ["head", "data", "end"],
    "the request's end closes it",
  );
});

t.test("malformed requests are RST_STREAM PROTOCOL_ERROR and never reach the user; the connection lives (RFC 9113 §8.1.1)", async (t) => {
  const cases: [string, HeaderField[]][] = [
    ["CR in a value", [...GET, { name: "x", value: "a\rb" }]],
    ["LF in a value", [...GET, { name: "x", value: "a\nb" }]],
    ["NUL in a value", [...GET, { name: "x", value: "a\0b" }]],
    ["uppercase name", [...GET, { name: "X-Up", value: "1" }]],
    ["connection-specific field", [...GET, { name: "connection", value: "close" }]],
    ["transfer-encoding", [...GET, { name: "transfer-encoding", value: "chunked" }]],
    ["te other than trailers", [...GET, { name: "te", value: "gzip" }]],
    ["no :path", GET.filter((field) => field.name !== ":path")],
    ["empty :path", GET.map((field) => (field.name === ":path" ? { ...field, value: "" } : field))],
    ["repeated :method", [...GET.slice(0, 1), ...GET]],
    ["unknown pseudo-field", [...GET, { name: ":protocol", value: "websocket" }]],
    ["pseudo-field after a regular one", [GET[0]!, { name: "x", value: "1" }, ...GET.slice(1)]],
    [":status in a request", [...GET, { name: ":status", value: "200" }]],
    ["a value with a leading space", [...GET, { name: "x", value: " a" }]],
    ["a bad content-length", [...GET, { name: "content-length", value: "1x" }]],
  ];
  for (const [name, fields] of cases) {
    const under = server();
    under.receive(headers(1, fields));
    await under.settle();
    t.same(under.heads(), [], `${name}: not handed on`);
    t.same(under.resets(), [[1, H2_ERROR.PROTOCOL_ERROR]], `${name}: RST_STREAM PROTOCOL_ERROR`);
    under.receive(headers(3, GET));
    t.equal(under.heads().length, 1, `${name}: the next request goes on`);
  }
});

t.test("a body longer or shorter than its content-length is a stream error", async (t) => {
  const long = server();
  long.receive(headers(1, [...POST, { name: "content-length", value: "3" }], false), data(1, "abcd", true));
  t.same(long.resets(), [[1, H2_ERROR.PROTOCOL_ERROR]]);
  t.notOk(long.events.some((event) => event.kind === "data"), "no octet past the length is handed on");
  const short = server();
  short.receive(headers(1, [...POST, { name: "content-length", value: "3" }], false), data(1, "ab", true));
  t.same(short.resets(), [[1, H2_ERROR.PROTOCOL_ERROR]]);
  t.same(
    short.events.filter((event) => event.kind === "reset").map((event) => event.kind === "reset" && event.code),
    [H2_ERROR.PROTOCOL_ERROR],
    "the user is told the stream ended",
  );
});

t.test("the 101st concurrent stream is refused with REFUSED_STREAM; the connection lives", async (t) => {
  const under = server();
  for (let id = 1; id <= 201; id += 2) under.receive(headers(id, GET, false));
  t.equal(under.heads().length, 100);
  t.same(under.resets(), [[201, H2_ERROR.REFUSED_STREAM]]);
  t.equal(under.goawayCode(), undefined);
});

t.test("rapid reset: past 1,000 streams reset by the peer (and 33 a second), GOAWAY ENHANCE_YOUR_CALM", async (t) => {
  const under = server();
  const chunks: Buffer[] = [];
  for (let i = 0; i < 1001; i++) chunks.push(headers(1 + 2 * i, GET, false), rst(1 + 2 * i, H2_ERROR.CANCEL));
  under.receive(...chunks);
  t.equal(under.goawayCode(), H2_ERROR.ENHANCE_YOUR_CALM);
  t.equal(under.heads().length, 1001, "each request reached the user once, none after the GOAWAY");
  t.ok(under.transport.ended);

  const refilled = server();
  for (let i = 0; i < 1000; i++) refilled.receive(headers(1 + 2 * i, GET, false), rst(1 + 2 * i, H2_ERROR.CANCEL));
  refilled.now += 1000; // a second later: 33 more are allowed
  for (let i = 1000; i < 1033; i++) refilled.receive(headers(1 + 2 * i, GET, false), rst(1 + 2 * i, H2_ERROR.CANCEL));
  t.equal(refilled.goawayCode(), undefined, "the refill allows 33 a second");
  refilled.receive(headers(1 + 2 * 1033, GET, false), rst(1 + 2 * 1033, H2_ERROR.CANCEL));
  t.equal(refilled.goawayCode(), H2_ERROR.ENHANCE_YOUR_CALM);
});

t.test("glitches: PRIORITY, unknown frames, empty DATA and the resets the peer's errors earn share one budget of 10,000", async (t) => {
  const under = server();
  const flood: Buffer[] = [];
  for (let i = 0; i < 10001; i++) flood.push(i % 2 === 0 ? priority(1, 3) : frame(0x20, 0, 0, Buffer.alloc(1)));
  under.receive(...flood);
  t.equal(under.goawayCode(), H2_ERROR.ENHANCE_YOUR_CALM);

  const provoked = server();
  // MadeYouReset (CVE-2025-8671): each WINDOW_UPDATE of 0 on an open stream makes us reset it.
  // In reads of 500, so that the queued-answers bound (1,000 a read) is not what ends it.
  for (let from = 0; from < 10001 && provoked.goawayCode() === undefined; from += 500) {
    const chunks: Buffer[] = [];
    for (let i = from; i < Math.min(from + 500, 10001); i++) chunks.push(headers(1 + 2 * i, GET, false), windowUpdate(1 + 2 * i, 0));
    provoked.receive(...chunks);
  }
  t.equal(provoked.goawayCode(), H2_ERROR.ENHANCE_YOUR_CALM);
  t.equal(provoked.resets().length, 10000);

  const empty = server();
  const empties: Buffer[] = [headers(1, POST, false)];
  for (let i = 0; i < 10001; i++) empties.push(data(1, ""));
  empty.receive(...empties);
  t.equal(empty.goawayCode(), H2_ERROR.ENHANCE_YOUR_CALM);
  t.notOk(empty.events.some((event) => event.kind === "data"), "empty frames are never handed on");
});

t.test("PING and SETTINGS floods: past 1,000 answers queued in one read (or not yet taken by the socket), GOAWAY ENHANCE_YOUR_CALM", async (t) => {
  const pings = server();
  pings.receive(...Array.from({ length: 1001 }, ping));
  t.equal(pings.goawayCode(), H2_ERROR.ENHANCE_YOUR_CALM);
  const settings = server();
  settings.receive(...Array.from({ length: 1001 }, () => settingsFrame([])));
  t.equal(settings.goawayCode(), H2_ERROR.ENHANCE_YOUR_CALM);
  const reading = server();
  for (let i = 0; i < 5; i++) reading.receive(...Array.from({ length: 500 }, ping));
  t.equal(reading.goawayCode(), undefined, "a peer that takes its answers may ping on");
  const stalled = server();
  stalled.transport.writableLength = 100;
  for (let i = 0; i < 3 && stalled.goawayCode() === undefined; i++) stalled.receive(...Array.from({ length: 500 }, ping));
  t.equal(stalled.goawayCode(), H2_ERROR.ENHANCE_YOUR_CALM, "one that does not read may not queue more than 1,000");
});

t.test("CONTINUATION: at most 8 after a HEADERS; the 9th ends the connection with ENHANCE_YOUR_CALM", async (t) => {
  const under = server();
  const block = headerBlock(GET);
  const frames = [frame(FRAME.HEADERS, FLAG.END_STREAM, 1, block.subarray(0, 1))];
  for (let i = 1; i <= 9; i++) frames.push(frame(FRAME.CONTINUATION, 0, 1, Buffer.alloc(0)));
  under.receive(...frames);
  t.equal(under.goawayCode(), H2_ERROR.ENHANCE_YOUR_CALM);
  t.same(under.heads(), []);
});

t.test("flow control in: a stream may hold at most its window; credit returns only as the user consumes", async (t) => {
  const under = server();
  under.consumeData = false;
  under.receive(headers(1, POST, false), bulk(1, 65535));
  await under.settle();
  t.same(under.sent(FRAME.WINDOW_UPDATE).filter((frame) => frame.streamId === 1), [], "no credit while the user holds the data");
  under.receive(data(1, "x"));
  t.same(under.resets(), [[1, H2_ERROR.FLOW_CONTROL_ERROR]], "one octet past the window: RST_STREAM FLOW_CONTROL_ERROR");

  const consuming = server();
  consuming.receive(headers(1, POST, false), bulk(1, 40000));
  await consuming.settle();
  const update = consuming.sent(FRAME.WINDOW_UPDATE).find((frame) => frame.streamId === 1);
  t.equal(update?.payload.readUInt32BE(0), 16384 * 2, "consumed octets return in one WINDOW_UPDATE once past half the window");
});

t.test("a stream that ends while its user holds body octets gives them back to the connection's window", async (t) => {
  const under = server({ connectionWindow: 65535 });
  under.consumeData = false;
  under.receive(headers(1, POST, false), bulk(1, 40000), rst(1, H2_ERROR.CANCEL));
  await under.settle();
  const updates = under.sent(FRAME.WINDOW_UPDATE).map((frame) => [frame.streamId, frame.payload.readUInt32BE(0)]);
  t.same(updates, [[0, 40000]], "the held octets return on the connection, not on the closed stream");
  under.connection.consume(under.streams.get(1)!, 40000);
  await under.settle();
  t.equal(under.sent(FRAME.WINDOW_UPDATE).length, 1, "a late consume gives nothing back twice");
});

t.test("with an advance budget, a stream's DATA gives the connection's credit back on arrival, up to the budget, and the budget comes back when the octets are taken or dropped", async (t) => {
  const budget = new AdvanceBudget(50000);
  const under = server({ connectionWindow: 65535, advanceBudget: budget });
  under.consumeData = false;
  const updates = () => under.sent(FRAME.WINDOW_UPDATE).map((frame) => [frame.streamId, frame.payload.readUInt32BE(0)]);
  under.receive(headers(1, POST, false), bulk(1, 40000));
  await under.settle();
  // Announced in batches of half the connection's window, as credit taken back is.
  t.same(updates(), [[0, 32768]], "the held stream's octets are the connection's again at once; the stream's own window stays closed");
  t.equal(budget.left, 10000, "they are charged to the budget");
  under.receive(headers(3, POST, false), bulk(3, 16384));
  await under.settle();
  t.same(updates(), [[0, 32768]], "past the budget, credit waits for the reader, as without one");
  under.connection.consume(under.streams.get(1)!, 40000);
  await under.settle();
  t.same(updates(), [[0, 32768], [1, 40000]], "taken: the stream's credit goes back, the connection's is not given twice");
  t.equal(budget.left, 50000, "and the budget has it back");
  under.receive(rst(3, H2_ERROR.CANCEL));
  under.connection.consume(under.streams.get(3)!, 16384);
  await under.settle();
  t.equal(budget.left, 50000, "a stream that ends unadvanced leaves the budget as it was");

  const closing = server({ advanceBudget: budget });
  closing.consumeData = false;
  closing.receive(headers(1, POST, false), bulk(1, 30000));
  t.equal(budget.left, 20000);
  closing.connection.transportClosed();
  t.equal(budget.left, 50000, "a connection that closes gives back what its streams held on the budget");
});

t.test("flow control out: DATA split to the peer's window; WINDOW_UPDATE and a new INITIAL_WINDOW_SIZE let the rest go", async (t) => {
  const under = server();
  under.receive(settingsFrame([[4, 10]]), headers(1, GET));
  const stream = under.streams.get(1)!;
  under.connection.respond(stream, [":status", "200"], false);
  t.equal(under.connection.sendData(stream, Buffer.alloc(25, 0x61), false), false, "waits: the window is 10");
  await under.settle();
  t.same(under.sent(FRAME.DATA).map((frame) => frame.payload.length), [10]);
  under.receive(windowUpdate(1, 5));
  await under.settle();
  t.same(under.sent(FRAME.DATA).map((frame) => frame.payload.length), [10, 5]);
  under.receive(settingsFrame([[4, 30]]));
  await under.settle();
  const sizes = under.sent(FRAME.DATA).map((frame) => [frame.payload.length, frame.flags]);
  t.same(sizes, [[10, 0], [5, 0], [10, 0]], "the re-based window lets the rest go");
  t.ok(under.events.some((event) => event.kind === "writable" && event.streamId === 1), "the user hears the queue went");
  t.equal(under.connection.sendData(stream, Buffer.alloc(0), true), true, "the end needs no window");
  await under.settle();
  t.same(under.sent(FRAME.DATA).at(-1)?.flags, FLAG.END_STREAM);
});

t.test("a stream's window pushed past 2^31-1 is RST_STREAM FLOW_CONTROL_ERROR; the connection's is GOAWAY", async (t) => {
  const under = server();
  under.receive(headers(1, GET, false), windowUpdate(1, 0x7fffffff));
  t.same(under.resets(), [[1, H2_ERROR.FLOW_CONTROL_ERROR]]);
  t.equal(under.goawayCode(), undefined);
  under.receive(windowUpdate(0, 0x7fffffff));
  t.equal(under.goawayCode(), H2_ERROR.FLOW_CONTROL_ERROR);
});

t.test("stream states: frames after the peer's END_STREAM or RST_STREAM; ids that go down; idle streams", async (t) => {
  const closed = server();
  closed.receive(headers(1, GET, true), data(1, "late"));
  t.same(closed.resets(), [[1, H2_ERROR.STREAM_CLOSED]], "DATA on a half-closed (remote) stream");
  const lower = server();
  lower.receive(headers(5, GET), headers(3, GET));
  t.equal(lower.goawayCode(), H2_ERROR.PROTOCOL_ERROR, "an id below one opened since (§5.1.1)");
  const reopened = server();
  reopened.receive(headers(1, GET, false), rst(1, H2_ERROR.CANCEL), headers(1, GET));
  t.equal(reopened.goawayCode(), H2_ERROR.STREAM_CLOSED, "HEADERS on a closed stream");
  const idle = server();
  idle.receive(data(1, "x"));
  t.equal(idle.goawayCode(), H2_ERROR.PROTOCOL_ERROR, "DATA on an idle stream");
  const late = server();
  late.onHead = (stream) => late.connection.reset(stream, H2_ERROR.CANCEL);
  late.receive(headers(1, POST, false), data(1, "in flight"), windowUpdate(1, 10), rst(1, 0));
  t.same(late.resets(), [[1, H2_ERROR.CANCEL]], "frames in flight after our own reset are ignored");
  t.equal(late.goawayCode(), undefined);
  const after = server();
  after.onHead = (stream) => {
    after.connection.respond(stream, [":status", "204"], true);
  };
  after.receive(headers(1, GET), windowUpdate(1, 100), rst(1, 0), priority(1, 0));
  t.same(after.resets(), [], "WINDOW_UPDATE, RST_STREAM and PRIORITY after a close are ignored (§5.1)");
});

t.test("PING is answered with its payload; an ACK is not answered; a peer that does not read pauses reading", async (t) => {
  const under = server();
  under.receive(ping(), frame(FRAME.PING, FLAG.ACK, 0, Buffer.from("abcdefgh")));
  const acks = under.sent(FRAME.PING);
  t.equal(acks.length, 1);
  t.equal(acks[0]?.flags, FLAG.ACK);
  t.equal(acks[0]?.payload.toString(), "12345678");
  under.transport.writableLength = 1024 * 1024;
  under.receive(ping());
  t.ok(under.transport.paused, "reading stops while the output is not taken");
  under.transport.writableLength = 0;
  under.connection.transportDrained();
  t.notOk(under.transport.paused, "and goes on once it drains");
});

t.test("GOAWAY: the drain lets open streams finish, ignores streams above the last id, then closes", async (t) => {
  const under = server();
  under.receive(headers(1, GET, false));
  under.connection.shutdown();
  await under.settle();
  const goaway = under.sent(FRAME.GOAWAY)[0];
  t.equal(goaway?.payload.readUInt32BE(0), 1, "last stream id: 1");
  t.equal(goaway?.payload.readUInt32BE(4), H2_ERROR.NO_ERROR);
  under.receive(headers(3, GET));
  t.equal(under.heads().length, 1, "stream 3 came after the GOAWAY: not processed");
  t.notOk(under.transport.ended, "stream 1 is still open");
  under.receive(data(1, "", true));
  under.connection.respond(under.streams.get(1)!, [":status", "200"], true);
  t.ok(under.transport.ended, "the last stream done: the connection ends");
  t.same(under.events.at(-1), { kind: "close", code: undefined });
});

t.test("an exception thrown by the user costs its stream (INTERNAL_ERROR), never the connection", async (t) => {
  const under = server();
  under.onHead = (stream) => {
    if (stream.id === 1) throw new Error("a defect of ours");
  };
  under.receive(headers(1, GET), headers(3, GET));
  t.equal(under.faults.length, 1);
  t.same(under.resets(), [[1, H2_ERROR.INTERNAL_ERROR]]);
  t.equal(under.heads().length, 2);
  t.equal(under.goawayCode(), undefined);
});

t.test("a header list past 16 KiB is handed on as oversized (the user answers 431); the HPACK state stays in step", async (t) => {
  const under = server();
  const block = headerBlock([...GET, { name: "x-big", value: "a".repeat(17000) }]);
  under.receive(frame(FRAME.HEADERS, FLAG.END_STREAM, 1, block.subarray(0, 16384)), frame(FRAME.CONTINUATION, FLAG.END_HEADERS, 1, block.subarray(16384)));
  t.same(
    under.events.map((event) => event.kind),
    ["oversized"],
  );
  under.receive(headers(3, GET));
  t.equal(under.heads().length, 1);
});

t.test("the client side: preface, ids in order, a response with 1xx and trailers, GOAWAY resets what was not processed", async (t) => {
  const under = new ConnectionUnderTest("client");
  under.receive(settingsFrame([[3, 10]]));
  const first = under.connection.request([":method", "GET", ":scheme", "http", ":path", "/", ":authority", "app"], true, "one");
  const second = under.connection.request([":method", "GET", ":scheme", "http", ":path", "/", ":authority", "app"], true, "two");
  t.same([first.id, second.id], [1, 3]);
  await under.settle();
  t.equal(under.sent()[0]?.type, FRAME.SETTINGS, "the preface, then SETTINGS");
  under.receive(
    frame(FRAME.HEADERS, FLAG.END_HEADERS, 1, headerBlock([{ name: ":status", value: "103" }])),
    frame(FRAME.HEADERS, FLAG.END_HEADERS, 1, headerBlock([{ name: ":status", value: "200" }])),
    data(1, "body"),
    frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, 1, headerBlock([{ name: "grpc-status", value: "0" }])),
  );
  t.same(
    under.events.map((event) => event.kind),
    ["head", "head", "data", "trailers", "end"],
    "the stream's end is told after its trailers",
  );
  under.receive(frame(FRAME.GOAWAY, 0, 0, Buffer.concat([u32(1), u32(0)])));
  t.same(
    under.events.filter((event) => event.kind === "reset"),
    [{ kind: "reset", streamId: 3, code: H2_ERROR.REFUSED_STREAM, byPeer: true }],
    "stream 3 was above the last id: refused, to be sent again",
  );
  t.ok(under.transport.ended, "no stream left after the GOAWAY: closed");
});

t.test("the client side refuses a malformed response and DATA before the head", async (t) => {
  const under = new ConnectionUnderTest("client");
  under.receive(settingsFrame([]));
  const stream = under.connection.request([":method", "GET", ":scheme", "http", ":path", "/", ":authority", "app"], true, undefined);
  under.receive(frame(FRAME.HEADERS, FLAG.END_HEADERS, stream.id, headerBlock([{ name: ":status", value: "200" }, { name: "x", value: "a\nb" }])));
  t.same(under.resets(), [[1, H2_ERROR.PROTOCOL_ERROR]]);
  const early = under.connection.request([":method", "GET", ":scheme", "http", ":path", "/", ":authority", "app"], true, undefined);
  under.receive(data(early.id, "too early"));
  t.same(under.resets().at(-1), [3, H2_ERROR.PROTOCOL_ERROR]);
  t.same(under.heads(), []);
});
