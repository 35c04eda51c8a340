// The head timeout for a stream's HEADERS (CONTRACT §13): a header block begun and never finished, stalled or trickled in CONTINUATION frames, ends its connection by the relay's clock.
import { setImmediate as nextTurn } from "node:timers/promises";
import t, { type Test } from "tap";
import { HEADERS_TIMEOUT_MS, KEEP_ALIVE_TIMEOUT_MS } from "../../../src/relay/relay-server.js";
import { startTestDaemon, type TestDaemon } from "../../helpers/in-process-daemon.js";
import { startUpstream } from "../../helpers/upstream.js";
import { FLAG, FRAME, PREFACE, frame, headerBlock, settingsFrame } from "./h2-frames.js";
import { RawH2Client } from "./h2-raw-client.js";

const HEAD_TICKS = HEADERS_TIMEOUT_MS / 1000;
const KEEP_ALIVE_TICKS = KEEP_ALIVE_TIMEOUT_MS / 1000;
/** A bound on every wait for the proxy here: never reached when it behaves. */
const BOUND_MS = 5_000;

const REQUEST = headerBlock([
  { name: ":method", value: "GET", form: "indexed" },
  { name: ":scheme", value: "http", form: "indexed" },
  { name: ":path", value: "/stalled" },
  { name: ":authority", value: "proxy.test", form: "indexed-name" },
]);
const CRUMB = headerBlock([{ name: "x-crumb", value: "1" }]);

/** A session up and past its SETTINGS: a PING answered proves the proxy has read everything before it. */
async function openSession(daemon: TestDaemon): Promise<RawH2Client> {
  const client = await RawH2Client.connect(daemon.port);
  await client.write(Buffer.concat([PREFACE, settingsFrame([]), frame(FRAME.PING, 0, 0, Buffer.from("stall-01"))]));
  if (!(await client.until((view) => view.pingAcks.length > 0, BOUND_MS))) throw new Error("no PING ack");
  return client;
}

/** Advances the relay's clock `ticks` sweeps, letting I/O run between them; `onTick` runs before each. */
async function tick(daemon: TestDaemon, ticks: number, onTick: (tick: number) => Promise<void> = async () => {}): Promise<void> {
  for (let at = 1; at <= ticks; at++) {
    await onTick(at);
    daemon.server.sweep();
    await nextTurn();
  }
}

/**
 * Still open a little before `limitTicks` of the relay's clock, closed (after GOAWAY) a little
 * after it: the sweep that first sees a state starts its timer, the one `limitTicks` later acts.
 */
async function closesAfter(t: Test, daemon: TestDaemon, client: RawH2Client, limitTicks: number, onTick?: (tick: number) => Promise<void>): Promise<void> {
  await tick(daemon, limitTicks - 2, onTick);
  t.notOk(client.closed || client.goaway !== undefined, `still open after ${limitTicks - 2} ticks`);
  await tick(daemon, 4, onTick && (async (at) => onTick(limitTicks - 2 + at)));
  t.ok(await client.until((view) => view.closed, BOUND_MS), `closed after ${limitTicks + 2} ticks`);
  t.ok(client.goaway !== undefined, "GOAWAY before the close");
}

t.test("a HEADERS frame without END_HEADERS, then nothing: the connection ends at the head timeout", async (t) => {
  const app = await startUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", app.url, "--upstream-protocol", "http1"]);
  const client = await openSession(daemon);
  t.teardown(() => client.destroy());
  await client.write(frame(FRAME.HEADERS, FLAG.END_STREAM, 1, REQUEST));
  // The proxy reads what a write hands the kernel in the next turns of its loop (loopback).
  await nextTurn();
  await closesAfter(t, daemon, client, HEAD_TICKS);
  t.same(app.received, [], "nothing reached the app");
});

t.test("CONTINUATION frames trickled without END_HEADERS do not keep it alive", async (t) => {
  const app = await startUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", app.url, "--upstream-protocol", "http1"]);
  const client = await openSession(daemon);
  t.teardown(() => client.destroy());
  await client.write(frame(FRAME.HEADERS, FLAG.END_STREAM, 1, REQUEST));
  await nextTurn();
  // A crumb every third tick, four in all: nghttp2 ends a block of more than eight CONTINUATION
  // frames itself, which is not what is tested here.
  await closesAfter(t, daemon, client, HEAD_TICKS, async (at) => {
    if (at % 3 === 0) {
      await client.write(frame(FRAME.CONTINUATION, 0, 1, CRUMB));
      await nextTurn();
    }
  });
  t.same(app.received, [], "nothing reached the app");
});

t.test("a header block finished in time is served; the connection then idles to the keep-alive time, not the head timeout", async (t) => {
  const app = await startUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", app.url, "--upstream-protocol", "http1"]);
  const client = await openSession(daemon);
  t.teardown(() => client.destroy());
  await client.write(frame(FRAME.HEADERS, FLAG.END_STREAM, 1, REQUEST));
  await nextTurn();
  for (let tick = 0; tick < HEAD_TICKS - 2; tick++) daemon.server.sweep();
  await client.write(frame(FRAME.CONTINUATION, FLAG.END_HEADERS, 1, CRUMB));
  t.ok(await client.until((view) => view.streams.get(1)?.ended === true, BOUND_MS), "answered");
  t.equal(client.streams.get(1)?.status, 200);
  t.equal(app.received[0]?.headers["x-crumb"], "1", "the whole block reached the app");
  await closesAfter(t, daemon, client, KEEP_ALIVE_TICKS);
});
