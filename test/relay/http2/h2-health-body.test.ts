// The gRPC health service's body, read by the proxy itself (issue 52, 1): no more of it is kept than the service needs (past 1 KiB the call is the app's), and one whose END_STREAM never comes is ended at the head timeout by the relay's clock.
import { setImmediate as nextTurn } from "node:timers/promises";
import t from "tap";
import { DECODED, HpackDecoder } from "../../../src/h2-codec/hpack-decoder.js";
import { MAX_HEALTH_REQUEST_BYTES } from "../../../src/grpc-health/health-service.js";
import { HEADERS_TIMEOUT_MS } from "../../../src/relay/relay-server.js";
import { startH2Upstream } from "../../helpers/h2.js";
import { startTestDaemon, type TestDaemon } from "../../helpers/in-process-daemon.js";
import { closedPort } from "../../helpers/test-doubles.js";
import { FLAG, FRAME, PREFACE, frame, headerBlock, settingsFrame } from "./h2-frames.js";
import { RawH2Client } from "./h2-raw-client.js";

const HEAD_TICKS = HEADERS_TIMEOUT_MS / 1000;
/** A bound on every wait for the proxy here: never reached when it behaves. */
const BOUND_MS = 5_000;

const CHECK = headerBlock([
  { name: ":method", value: "POST", form: "indexed" },
  { name: ":scheme", value: "http", form: "indexed" },
  { name: ":path", value: "/grpc.health.v1.Health/Check" },
  { name: ":authority", value: "proxy.test", form: "indexed-name" },
  { name: "content-type", value: "application/grpc", form: "indexed-name" },
  { name: "te", value: "trailers" },
]);

let pings = 0;
/** Writes `bytes` and a PING: once it is answered, the proxy has read everything before it. */
async function writeAndSettle(client: RawH2Client, bytes: Buffer): Promise<void> {
  const seen = client.pingAcks.length;
  await client.write(Buffer.concat([bytes, frame(FRAME.PING, 0, 0, Buffer.from(`body-${String(pings++).padStart(3, "0")}`))]));
  if (!(await client.until((view) => view.pingAcks.length > seen, BOUND_MS))) throw new Error("no PING ack");
}

async function openSession(daemon: TestDaemon): Promise<RawH2Client> {
  const client = await RawH2Client.connect(daemon.port);
  await writeAndSettle(client, Buffer.concat([PREFACE, settingsFrame([])]));
  return client;
}

async function tick(daemon: TestDaemon, ticks: number): Promise<void> {
  for (let at = 0; at < ticks; at++) {
    daemon.server.sweep();
    await nextTurn();
  }
}

/** The fields of a stream's header blocks, decoded in order (the only answer on its connection). */
function fieldsOf(blocks: readonly Buffer[]): string[] {
  const decoder = new HpackDecoder();
  const fields: string[] = [];
  for (const block of blocks) if (decoder.decode(block, 0, block.length, fields) !== DECODED.OK) throw new Error("undecodable answer");
  return fields;
}

t.test("a Check body that outgrows what the service needs goes to the app at once, not after 64 KiB", { timeout: 20_000 }, async (t) => {
  const app = await startH2Upstream(t);
  let opened!: () => void;
  const appOpened = new Promise<void>((resolve) => (opened = resolve));
  const bodies: Buffer[] = [];
  app.handle((stream) => {
    opened();
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => {
      bodies.push(Buffer.concat(chunks));
      stream.respond({ ":status": 200, "content-type": "application/grpc" });
      stream.end();
    });
  });
  const daemon = await startTestDaemon(t, ["--upstream", app.url]);
  const client = await openSession(daemon);
  t.teardown(() => client.destroy());
  const body = Buffer.alloc(MAX_HEALTH_REQUEST_BYTES + 1, 0x61);
  await writeAndSettle(client, Buffer.concat([frame(FRAME.HEADERS, FLAG.END_HEADERS, 1, CHECK), frame(FRAME.DATA, 0, 1, body)]));
  // No END_STREAM yet: the app has the stream only if the proxy stopped reading it for itself.
  await appOpened; // the test's own timeout bounds it: on a proxy that kept reading, it never comes
  await client.write(frame(FRAME.DATA, FLAG.END_STREAM, 1, Buffer.from("tail")));
  t.ok(await client.until((view) => view.streams.get(1)?.ended === true, BOUND_MS), "answered");
  t.same(bodies[0], Buffer.concat([body, Buffer.from("tail")]), "the app had the whole body, what the proxy read first included");
});

t.test("a Check body whose END_STREAM never comes: a gRPC DEADLINE_EXCEEDED at the head timeout, then RST_STREAM NO_ERROR", async (t) => {
  const daemon = await startTestDaemon(t, ["--upstream", `http://127.0.0.1:${await closedPort()}`]);
  const client = await openSession(daemon);
  t.teardown(() => client.destroy());
  // Three octets of a message's five-octet prefix, then nothing.
  await writeAndSettle(client, Buffer.concat([frame(FRAME.HEADERS, FLAG.END_HEADERS, 1, CHECK), frame(FRAME.DATA, 0, 1, Buffer.from([0, 0, 0]))]));
  await tick(daemon, HEAD_TICKS - 1);
  await writeAndSettle(client, Buffer.alloc(0));
  t.equal(client.streams.get(1), undefined, `nothing answered after ${HEAD_TICKS - 1} ticks`);
  await tick(daemon, 2);
  t.ok(await client.until((view) => view.streams.get(1)?.rstCode !== undefined, BOUND_MS), "the stream is ended");
  const answer = client.streams.get(1)!;
  t.equal(answer.rstCode, 0, "RST_STREAM NO_ERROR: the rest of the request is not wanted");
  t.ok(answer.ended, "after a whole answer");
  const fields = fieldsOf(answer.blocks);
  t.same([fields[0], fields[1]], [":status", "200"]);
  t.equal(fields[fields.indexOf("grpc-status") + 1], "4", "grpc-status 4 (DEADLINE_EXCEEDED)");
  t.equal(decodeURIComponent(fields[fields.indexOf("grpc-message") + 1]!), "request body timed out");
  t.notOk(client.closed, "the connection lives");
  await writeAndSettle(client, Buffer.alloc(0));
});

t.test("a client that resets its Check while the body is read leaves nothing behind", async (t) => {
  const daemon = await startTestDaemon(t, ["--upstream", `http://127.0.0.1:${await closedPort()}`]);
  const client = await openSession(daemon);
  t.teardown(() => client.destroy());
  const reset = Buffer.alloc(4);
  reset.writeUInt32BE(8); // CANCEL
  await writeAndSettle(client, Buffer.concat([frame(FRAME.HEADERS, FLAG.END_HEADERS, 1, CHECK), frame(FRAME.DATA, 0, 1, Buffer.from([0])), frame(FRAME.RST_STREAM, 0, 1, reset)]));
  await tick(daemon, HEAD_TICKS + 1);
  await writeAndSettle(client, Buffer.alloc(0));
  t.equal(client.streams.get(1), undefined, "nothing is sent on a stream the client reset");
  t.notOk(client.closed);
});
