// Issue 52: past MAX_PARSED_AHEAD pipelined requests the parser stops after a head and the rest of the read waits as octets; nothing is lost or reordered across that point (bodies, heads and errors split by it, an upgrade after it, a close, a drain).
import { connect, type Socket } from "node:net";
import type { IncomingMessage } from "node:http";
import fc from "fast-check";
import t, { type Test } from "tap";
import { startGatedUpstream } from "../helpers/gated-upstream.js";
import { fuzzSettings } from "../helpers/fuzz-settings.js";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { startUpstream, type TestUpstream } from "../helpers/upstream.js";
import { MAX_PARSED_AHEAD } from "../../src/relay/http1/request-pipeline.js";
import { exchange, type ExchangeResult } from "./raw-exchange.js";

/** One request of a pipelined stream and what the echoing app answers it. */
interface Step {
  readonly bytes: string;
  readonly answer: string;
}

const get = (name: string): Step => ({ bytes: `GET /${name} HTTP/1.1\r\nHost: a\r\n\r\n`, answer: `GET /${name} ` });
const sized = (name: string, body = `body of ${name}`): Step => ({
  bytes: `POST /${name} HTTP/1.1\r\nHost: a\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
  answer: `POST /${name} ${body}`,
});
/** The body in two chunks (one of them empty when the body is shorter than 2). */
const chunked = (name: string, body = `body of ${name}`): Step => {
  const half = Math.floor(body.length / 2);
  const chunks = [body.slice(0, half), body.slice(half)].filter((chunk) => chunk.length > 0);
  return {
    bytes: `POST /${name} HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n${chunks.map((chunk) => `${chunk.length.toString(16)}\r\n${chunk}\r\n`).join("")}0\r\n\r\n`,
    answer: `POST /${name} ${body}`,
  };
};
const KINDS = [get, sized, chunked] as const;

/** `count` requests named from `from`, each kind in turn. */
function mixed(from: number, count: number): Step[] {
  return Array.from({ length: count }, (_, index) => KINDS[(from + index) % KINDS.length]!(`r${from + index}`));
}

/** An app that answers each request with its method, target and body. */
async function echoingApp(t: Test): Promise<TestUpstream> {
  const app = await startUpstream(t);
  app.handle((req: IncomingMessage, res, body) => res.end(`${req.method} ${req.url} ${body.toString("latin1")}`));
  return app;
}

/** Writes `pieces` (a turn between them), reads `expected` answers (fewer if the connection closed first), then half-closes. */
function answers(port: number, pieces: readonly string[], expected: number): Promise<ExchangeResult> {
  return exchange(port, { pieces: pieces.map((piece) => Buffer.from(piece, "latin1")), responses: expected, then: "half-close", timeoutMs: 30_000 });
}

// The first read's heads all wait (none starts before the read is parsed): the parser stops after the head that makes them MAX_PARSED_AHEAD.
const PAUSE_AT = MAX_PARSED_AHEAD - 1;

for (const kind of KINDS) {
  t.test(`${MAX_PARSED_AHEAD + 40} pipelined requests in one write, the one the parser stops after a ${kind.name === "get" ? "GET" : kind.name === "sized" ? "POST with Content-Length" : "chunked POST"}: each answered in order, every body whole`, async (t) => {
    const app = await echoingApp(t);
    const daemon = await startTestDaemon(t, ["--upstream", app.url]);
    const steps = [...Array.from({ length: PAUSE_AT }, (_, index) => get(`r${index}`)), kind(`r${PAUSE_AT}`), ...mixed(PAUSE_AT + 1, 40)];
    const result = await answers(daemon.port, [steps.map((step) => step.bytes).join("")], steps.length);
    t.same(result.bodies, steps.map((step) => step.answer), "every answer, in order");
    t.equal(app.received.length, steps.length, "each reached the app once");
  });
}

t.test("a read that ends with the head the parser stops after: that request (no body follows) is still answered", async (t) => {
  const app = await echoingApp(t);
  const daemon = await startTestDaemon(t, ["--upstream", app.url]);
  const steps = Array.from({ length: MAX_PARSED_AHEAD }, (_, index) => get(`r${index}`));
  const result = await answers(daemon.port, [steps.map((step) => step.bytes).join("")], steps.length);
  t.same(result.bodies, steps.map((step) => step.answer));
});

const SPLITS: readonly { readonly name: string; readonly last: string; readonly cut: number; readonly answer: string }[] = [
  { name: "a head", last: "GET /split HTTP/1.1\r\nHost: a\r\n\r\n", cut: 22, answer: "GET /split " },
  { name: "a Content-Length body", last: "POST /split HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n0123456789", cut: 57, answer: "POST /split 0123456789" },
  { name: "a chunk-size line", last: "POST /split HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n0123456789abcdef\r\n0\r\n\r\n", cut: 64, answer: "POST /split 0123456789abcdef" },
];

for (const split of SPLITS) {
  t.test(`${split.name} split between the held rest of a read and the next read: answered in its place`, async (t) => {
    const app = await echoingApp(t);
    const daemon = await startTestDaemon(t, ["--upstream", app.url]);
    const before = mixed(0, MAX_PARSED_AHEAD + 8);
    const after = mixed(100, 5);
    const first = before.map((step) => step.bytes).join("") + split.last.slice(0, split.cut);
    const second = split.last.slice(split.cut) + after.map((step) => step.bytes).join("");
    const expected = [...before.map((step) => step.answer), split.answer, ...after.map((step) => step.answer)];
    const result = await answers(daemon.port, [first, second], expected.length);
    t.same(result.bodies, expected);
  });
}

const BROKEN: readonly { readonly name: string; readonly at: number; readonly bytes: string }[] = [
  { name: "a malformed head after the held point", at: MAX_PARSED_AHEAD + 8, bytes: "GET /broken HTTP/1.1\r\nHost: a\r\nBad Header\r\n\r\n" },
  { name: "a malformed chunk in the body of the request the parser stops after", at: PAUSE_AT, bytes: "POST /broken HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n" },
];

for (const broken of BROKEN) {
  t.test(`${broken.name}: the requests before it answered in order, then the 400 and the close; it never reaches the app`, async (t) => {
    const app = await echoingApp(t);
    const daemon = await startTestDaemon(t, ["--upstream", app.url]);
    const before = Array.from({ length: broken.at }, (_, index) => get(`r${index}`));
    const result = await exchange(daemon.port, { pieces: [Buffer.from(before.map((step) => step.bytes).join("") + broken.bytes + get("after").bytes)], responses: before.length + 1, then: "await-close", timeoutMs: 30_000 });
    t.same(result.bodies.slice(0, before.length), before.map((step) => step.answer), "the earlier answers, in order");
    t.same(result.finals.slice(before.length), [400], "then the 400, last");
    t.ok(result.closedByPeer, "the proxy closed the connection");
    t.notOk(app.received.some((request) => request.url === "/broken" || request.url === "/after"), "neither it nor what follows reached the app");
  });
}

t.test("Connection: close in the middle of the held requests: answered up to it, the last saying close, then the close", async (t) => {
  const app = await echoingApp(t);
  const daemon = await startTestDaemon(t, ["--upstream", app.url]);
  const before = mixed(0, MAX_PARSED_AHEAD + 7);
  const closing = "GET /closing HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";
  const result = await exchange(daemon.port, { pieces: [Buffer.from(before.map((step) => step.bytes).join("") + closing + mixed(100, 10).map((step) => step.bytes).join(""))], responses: before.length + 2, then: "await-close", timeoutMs: 30_000 });
  t.same(result.bodies, [...before.map((step) => step.answer), "GET /closing "], "answered up to it, and nothing after it");
  t.match(result.received, /connection: close\r\n[^]*GET \/closing $/, "the last answer says close");
  t.ok(result.closedByPeer);
  t.equal(app.received.length, before.length + 1, "nothing after it reached the app");
});

t.test("a WebSocket upgrade after more pipelined requests than are parsed ahead: they are answered, then the tunnel carries what followed the head", async (t) => {
  const gate = await startGatedUpstream(t);
  gate.server.on("upgrade", (_req: IncomingMessage, socket: Socket, head: Buffer) => {
    socket.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
    if (head.length > 0) socket.write(head);
    socket.pipe(socket);
  });
  const daemon = await startTestDaemon(t, ["--upstream", gate.url]);
  const count = MAX_PARSED_AHEAD + 8;
  const gets = Array.from({ length: count }, (_, index) => get(`r${index}`).bytes).join("");
  const upgrade = "GET /tunnel HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
  const socket = connect(daemon.port, "127.0.0.1");
  t.teardown(() => socket.destroy());
  let text = "";
  const echoed = new Promise<void>((resolve) =>
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1");
      if (text.endsWith("after the head")) resolve();
    }),
  );
  socket.write(gets + upgrade + "after the head");
  // The gated app holds each GET until released: release them as they come, in order.
  for (let index = 0; index < count; index++) (await gate.arrivals(index + 1))[index]!.release(`answer ${index}`);
  await echoed;
  const seen = [...text.matchAll(/answer (\d+)/g)].map((match) => Number(match[1]));
  t.same(seen, Array.from({ length: count }, (_, index) => index), "every GET answered, in order");
  t.match(text, /answer \d+HTTP\/1\.1 101 Switching Protocols\r\n[^]*\r\n\r\nafter the head$/, "then the 101, then the tunnel's bytes");
});

t.test("the client closes while requests are held: the app's request is cut, no held one reaches it, the next client is served", async (t) => {
  const app = await startGatedUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", app.url]);
  const socket = connect(daemon.port, "127.0.0.1");
  socket.on("error", () => {});
  await new Promise((resolve) => socket.once("connect", resolve));
  socket.write(Array.from({ length: 200 }, (_, index) => get(`held${index}`).bytes).join(""));
  const [first] = await app.arrivals(1);
  socket.destroy();
  await first!.aborted;
  const fresh = connect(daemon.port, "127.0.0.1");
  t.teardown(() => fresh.destroy());
  fresh.write(get("fresh").bytes);
  const arrived = await app.arrivals(2);
  t.same(arrived.map((request) => request.url), ["/held0", "/fresh"], "after the close, only the next client's request");
});

t.test("a drain while requests are held: the active answer says close and ends the connection; none held reaches the app", async (t) => {
  const app = await startGatedUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", app.url]);
  const text = new Promise<string>((resolve) => {
    const socket = connect(daemon.port, "127.0.0.1", () => socket.write(Array.from({ length: 200 }, (_, index) => get(`held${index}`).bytes).join("")));
    let received = "";
    socket.on("data", (chunk: Buffer) => (received += chunk.toString("latin1")));
    socket.on("error", () => {});
    socket.on("close", () => resolve(received));
  });
  const [first] = await app.arrivals(1);
  const drained = daemon.shutdown.run("SIGTERM");
  first!.release("the first");
  const answer = await text;
  await drained;
  t.match(answer, /^HTTP\/1\.1 200 OK\r\nconnection: close\r\n[^]*\r\n\r\nthe first$/, "one answer, saying close");
  t.equal(app.arrived.length, 1, "none held reached the app");
});

const { runs, seed, path } = fuzzSettings("PIPELINED_SPLIT", { fixedSeed: 20261207, defaultRuns: 40 });

t.test("property: a random pipelined stream cut at random points gives the echoing app's answers, each once, in order", async (t) => {
  const app = await echoingApp(t);
  const daemon = await startTestDaemon(t, ["--upstream", app.url]);
  const step = fc.tuple(fc.constantFrom(0, 1, 2), fc.string({ unit: fc.constantFrom("a", "b", "\r", "\n", "0"), maxLength: 40 })).map(([kind, body]) => ({ kind, body }));
  const stream = fc.array(step, { minLength: 1, maxLength: 3 * MAX_PARSED_AHEAD });
  const cuts = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 });
  await fc.assert(
    fc.asyncProperty(stream, cuts, async (drawn, cutAt) => {
      const steps = drawn.map(({ kind, body }, index) => (kind === 0 ? get(`r${index}`) : kind === 1 ? sized(`r${index}`, body) : chunked(`r${index}`, body)));
      const bytes = steps.map((entry) => entry.bytes).join("");
      const points = [...new Set(cutAt.map((at) => Math.floor(at * bytes.length)))].sort((a, b) => a - b);
      const pieces = [0, ...points].map((from, index) => bytes.slice(from, [...points, bytes.length][index])).filter((piece) => piece.length > 0);
      const result = await answers(daemon.port, pieces, steps.length);
      return result.bodies.length === steps.length && result.bodies.every((body, index) => body === steps[index]!.answer);
    }),
    { numRuns: runs, seed, ...(path === undefined ? {} : { path, endOnFailure: true }) },
  );
  t.pass(`${runs} streams, seed ${seed}`);
});
