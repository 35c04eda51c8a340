// Once the connection is over, the rest of the socket read is not read: no handler call after onClose, no write after the transport's end.
import t from "tap";
import { H2Connection, type H2ConnectionHandler, type H2Transport } from "../../src/h2-codec/h2-connection.js";
import { FLAG, FRAME, PREFACE, frame, headerBlock, settingsFrame } from "../relay/http2/h2-frames.js";

/** Records the transport's and the handler's calls in one order. */
function recorder(): { events: string[]; transport: H2Transport; handler: H2ConnectionHandler } {
  const events: string[] = [];
  let ended = false;
  const transport: H2Transport = {
    write: (chunk) => (events.push(ended ? "write after end" : `write ${chunk.length}`), true),
    cork() {},
    uncork() {},
    writableLength: 0,
    pause() {},
    resume() {},
    end: () => ((ended = true), events.push("end")),
    destroy: () => events.push("destroy"),
  };
  const handler: H2ConnectionHandler = {
    onHead: (stream) => events.push(`onHead ${stream.id}`),
    onOversizedHead: (stream) => events.push(`onOversizedHead ${stream.id}`),
    onData: (stream) => events.push(`onData ${stream.id}`),
    onTrailers: (stream) => events.push(`onTrailers ${stream.id}`),
    onReset: (stream, code) => events.push(`onReset ${stream.id} ${code}`),
    onStreamEnd() {},
    onWritable() {},
    onGoaway: () => events.push("onGoaway"),
    onClose: (error) => events.push(`onClose ${error?.code ?? "clean"}`),
    onFault: (error) => events.push(`onFault ${String(error)}`),
  };
  return { events, transport, handler };
}

const request = frame(
  FRAME.HEADERS,
  FLAG.END_HEADERS | FLAG.END_STREAM,
  1,
  headerBlock([
    { name: ":method", value: "GET" },
    { name: ":scheme", value: "http" },
    { name: ":path", value: "/" },
    { name: ":authority", value: "a.test" },
  ]),
);

t.test("the client's GOAWAY, then HEADERS and PING in the same read: the connection closes at the GOAWAY and hears nothing after", async (t) => {
  const { events, transport, handler } = recorder();
  const connection = new H2Connection(transport, handler, { role: "server", clock: () => 0 });
  // Found by the session differential: before, onHead 1 came after onClose, and the PING's ACK was written after end().
  connection.receive(Buffer.concat([PREFACE, settingsFrame([]), frame(FRAME.GOAWAY, 0, 0, Buffer.alloc(8)), request, frame(FRAME.PING, 0, 0, Buffer.alloc(8))]));
  const closedAt = events.indexOf("onClose clean");
  t.ok(closedAt >= 0, `closed (${events.join(", ")})`);
  t.same(events.slice(closedAt + 1), [], "nothing after onClose");
  t.notOk(events.includes("write after end"), "nothing written after end()");
  t.ok(connection.closed);
  connection.receive(request);
  t.notOk(events.includes("onHead 1"), "a later read is not read either");
});

t.test("a connection error mid-read: the frames after it are not read", async (t) => {
  const { events, transport, handler } = recorder();
  const connection = new H2Connection(transport, handler, { role: "server", clock: () => 0 });
  // A PING on stream 1 is a connection error (RFC 9113 §6.7); the request after it must not reach the app.
  connection.receive(Buffer.concat([PREFACE, settingsFrame([]), frame(FRAME.PING, 0, 1, Buffer.alloc(8)), request]));
  t.ok(events.includes("onClose PROTOCOL_ERROR"), events.join(", "));
  t.notOk(events.includes("onHead 1"));
  t.notOk(events.includes("write after end"));
});
