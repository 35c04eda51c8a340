// The listener's once-a-second sweep follows what is due, not the connections open (issue 58): over many idle HTTP/1.1 and h2c connections it looks at none, and at a few only those few, counted on the real connections by the relay's clock advanced by hand.
import { connect, type Socket } from "node:net";
import { setImmediate as nextTurn } from "node:timers/promises";
import t from "tap";
import { ClientConnection } from "../../src/relay/http1/client-connection.js";
import { H2Connection } from "../../src/h2-codec/h2-connection.js";
import { HEADERS_TIMEOUT_MS } from "../../src/relay/relay-server.js";
import { startTestDaemon, type TestDaemon } from "../helpers/in-process-daemon.js";
import { ManualTimers, within } from "../helpers/test-doubles.js";
import { startUpstream } from "../helpers/upstream.js";
import { FRAME, PREFACE, frame, settingsFrame } from "./http2/h2-frames.js";
import { RawH2Client } from "./http2/h2-raw-client.js";

const IDLE_HTTP1 = 200;
const IDLE_H2 = 100;
const BUSY = 5;
/** A bound on every wait for the proxy here: never reached when it behaves. */
const BOUND_MS = 10_000;

/** What a sweep does per connection it looks at, counted only inside the sweeps below. */
const looks = { parkParser: 0, closing: 0, headerBlock: 0, releaseBuffers: 0 };
let counting = false;

function countCalls<T extends object>(prototype: T, name: keyof typeof looks, method: string): void {
  const original = (prototype as Record<string, unknown>)[method] as (...args: unknown[]) => unknown;
  (prototype as Record<string, unknown>)[method] = function (this: unknown, ...args: unknown[]) {
    if (counting) looks[name]++;
    return original.apply(this, args);
  };
}

function countGetter<T extends object>(prototype: T, name: keyof typeof looks, property: string): void {
  const descriptor = Object.getOwnPropertyDescriptor(prototype, property)!;
  const get = descriptor.get!;
  Object.defineProperty(prototype, property, {
    ...descriptor,
    get(this: unknown) {
      if (counting) looks[name]++;
      return get.call(this);
    },
  });
}

countCalls(ClientConnection.prototype, "parkParser", "parkParserIfQuiet");
countGetter(ClientConnection.prototype, "closing", "closing");
countCalls(H2Connection.prototype, "releaseBuffers", "releaseIdleBuffers");
countGetter(H2Connection.prototype, "headerBlock", "headerBlockPending");

/** One sweep, letting I/O run after it; returns what it looked at. */
async function countedSweep(daemon: TestDaemon): Promise<typeof looks> {
  for (const key of Object.keys(looks) as (keyof typeof looks)[]) looks[key] = 0;
  counting = true;
  try {
    daemon.server.sweep();
  } finally {
    counting = false;
  }
  await nextTurn();
  return { ...looks };
}

function open(port: number): Promise<Socket> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => resolve(socket));
    socket.on("error", () => {});
  });
}

/** Resolves once `socket`'s request has been read and answered (a local answer: no app involved). */
function roundTrip(socket: Socket): Promise<void> {
  return new Promise<void>((resolve) => {
    socket.once("data", () => resolve());
    socket.write("GET /health HTTP/1.1\r\nHost: a\r\n\r\n");
  });
}

t.test("HTTP/1.1: idle connections are not looked at by the sweep; a few with heads under way are, and still get their 408", async (t) => {
  const upstream = await startUpstream(t);
  // Hand-moved timers: only the sweeps below run, never the listener's own tick while connections open on a loaded machine.
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url], undefined, { timers: new ManualTimers() });
  const sockets = await Promise.all(Array.from({ length: IDLE_HTTP1 }, () => open(daemon.port)));
  t.teardown(() => sockets.forEach((socket) => socket.destroy()));
  for (const socket of sockets) await roundTrip(socket);
  // Two ticks: the first sees each one's read, the second parks what they were lent.
  daemon.server.sweep();
  daemon.server.sweep();
  t.equal(daemon.server.parsers.lent, 0, `${IDLE_HTTP1} idle connections hold no parser`);
  for (let tick = 0; tick < 3; tick++) {
    const seen = await countedSweep(daemon);
    t.same(seen, { parkParser: 0, closing: 0, headerBlock: 0, releaseBuffers: 0 }, `tick ${tick}: none of ${IDLE_HTTP1} idle connections looked at`);
  }
  // A few begin heads and stall; a health request on a connection of its own, read after them, shows the proxy has read theirs.
  const slow = sockets.slice(0, BUSY);
  const closed = slow.map((socket) => new Promise<string>((resolve) => {
    let text = "";
    socket.on("data", (chunk: Buffer) => (text += chunk.toString("latin1")));
    socket.on("close", () => resolve(text));
  }));
  for (const socket of slow) socket.write("GET /slow HTTP/1.1\r\nHost: a\r\nX-Dribble: ");
  const probe = await open(daemon.port);
  t.teardown(() => probe.destroy());
  await roundTrip(probe);
  const heads = HEADERS_TIMEOUT_MS / 1000;
  for (let tick = 1; tick < heads; tick++) {
    const seen = await countedSweep(daemon);
    const looked = seen.parkParser + seen.closing;
    t.ok(looked <= 2 * (BUSY + 1), `tick ${tick}: looked ${looked} times (${JSON.stringify(seen)}), at most the ${BUSY} slow heads and the probe (of ${IDLE_HTTP1 + 1} open)`);
  }
  t.notOk(slow.some((socket) => socket.destroyed), "before the head timeout: still open");
  await countedSweep(daemon);
  // within() clears its bound: a pending 10 s timer held the file's process open for its 10 s.
  for (const text of await within(Promise.all(closed), BOUND_MS, [])) t.match(text, /^HTTP\/1\.1 408 /, "the slow head's 408, then the close");
  t.equal((await Promise.all(closed)).length, BUSY);
});

/** A session up and past its SETTINGS: a PING answered proves the proxy has read everything before it. */
async function openSession(daemon: TestDaemon): Promise<RawH2Client> {
  const client = await RawH2Client.connect(daemon.port);
  await client.write(Buffer.concat([PREFACE, settingsFrame([]), frame(FRAME.PING, 0, 0, Buffer.from("visits-0"))]));
  if (!(await client.until((view) => view.pingAcks.length > 0, BOUND_MS))) throw new Error("no PING ack");
  return client;
}

t.test("h2c: idle connections are not looked at by the sweep; one that reads is, once, and gives its buffers back", async (t) => {
  const upstream = await startUpstream(t);
  // Hand-moved timers: a real tick while 100 sessions open gave most of them their buffers back before the counted sweep.
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url, "--upstream-protocol", "http1"], undefined, { timers: new ManualTimers() });
  const clients: RawH2Client[] = [];
  t.teardown(() => clients.forEach((client) => client.destroy()));
  for (let index = 0; index < IDLE_H2; index++) clients.push(await openSession(daemon));
  const first = await countedSweep(daemon);
  t.equal(first.releaseBuffers, IDLE_H2, "the tick after their reads: each gives its buffers back once");
  for (let tick = 0; tick < 3; tick++) {
    const seen = await countedSweep(daemon);
    // The keep-alive deadlines look at their oldest member, whose keep-alive has not run out.
    t.same(seen, { parkParser: 0, closing: 0, headerBlock: 1, releaseBuffers: 0 }, `tick ${tick}: none of ${IDLE_H2} idle connections looked at but the keep-alive deadlines' oldest`);
  }
  const pinged = clients.slice(0, BUSY);
  for (const client of pinged) {
    const acks = client.pingAcks.length;
    await client.write(frame(FRAME.PING, 0, 0, Buffer.from("visits-1")));
    t.ok(await client.until((view) => view.pingAcks.length > acks, BOUND_MS), "PING answered");
  }
  const seen = await countedSweep(daemon);
  t.equal(seen.releaseBuffers, BUSY, `the ${BUSY} that read looked at, not the ${IDLE_H2}`);
  t.ok(seen.headerBlock <= BUSY + 1, `head checks: ${seen.headerBlock}`);
  t.same(await countedSweep(daemon), { parkParser: 0, closing: 0, headerBlock: 1, releaseBuffers: 0 }, "and then none but the keep-alive deadlines' oldest");
});
