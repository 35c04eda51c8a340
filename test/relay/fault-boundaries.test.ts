// Issue 27.1: a fault injected at each seam of the relay ends that request only (502 when nothing was sent, else a cut), with an HTTP/1.1 app and with an h2c one; the request beside it, the slots and the process carry on.
import { connect } from "node:net";
import t, { type Test } from "tap";
import { armFaults, type FaultSeam } from "../../src/relay/fault-injection.js";
import { send } from "../helpers/http-client.js";
import { startGatedUpstream, type GatedUpstream } from "../helpers/gated-upstream.js";
import { startH2Upstream } from "../helpers/h2.js";
import { startTestDaemon, type TestDaemon } from "../helpers/in-process-daemon.js";
import { scrapeText, seriesValue, untilSeries } from "../helpers/scrape.js";
import { ResponseReader } from "./raw-exchange.js";

type Outcome = number | "cut";

/** One raw request; the first final status, or "cut" when the connection closed without a whole answer. `halfClose`: our end right after the request. */
function rawOutcome(port: number, bytes: string, halfClose = false): Promise<Outcome> {
  const reader = new ResponseReader(() => false);
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => (halfClose ? socket.end(bytes) : socket.write(bytes)));
    const timer = setTimeout(() => socket.destroy(), 10_000);
    socket.on("data", (chunk: Buffer) => {
      reader.push(chunk);
      if (reader.finals.length > 0) socket.destroy();
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(reader.finals[0] ?? "cut");
    });
  });
}

const GET = (path: string) => `GET ${path} HTTP/1.1\r\nHost: a\r\n\r\n`;

interface Scene {
  readonly t: Test;
  readonly app: GatedUpstream;
  readonly daemon: TestDaemon;
  /** The requests held at the app before the victim came (the one beside it is arrived[0]). */
  readonly held: number;
}

interface Case {
  readonly seam: FaultSeam;
  /** What the victim may get: a 502 when the fault came before any byte of its answer, else a cut. */
  readonly expect: readonly Outcome[];
  /** Sends the victim with the hook armed at the seam's first passing; resolves with its outcome. */
  readonly run: (scene: Scene, arm: () => void) => Promise<Outcome>;
}

/** Arms, sends the victim's GET, lets the app answer it with `body` once it arrives. */
async function victimAnsweredWith(scene: Scene, arm: () => void, body: string): Promise<Outcome> {
  arm();
  const outcome = rawOutcome(scene.daemon.port, GET("/victim"));
  (await scene.app.arrivals(scene.held + 1))[scene.held]!.release(body);
  return outcome;
}

const CASES: readonly Case[] = [
  { seam: "head parsed", expect: [502], run: (scene, arm) => (arm(), rawOutcome(scene.daemon.port, GET("/victim"))) },
  {
    seam: "body chunk",
    expect: [502],
    run: (scene, arm) => (arm(), rawOutcome(scene.daemon.port, "POST /victim HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello")),
  },
  { seam: "upstream event", expect: [502], run: (scene, arm) => (arm(), rawOutcome(scene.daemon.port, GET("/victim"))) },
  { seam: "upstream head", expect: [502], run: (scene, arm) => victimAnsweredWith(scene, arm, "victim's body") },
  { seam: "upstream body", expect: ["cut"], run: (scene, arm) => victimAnsweredWith(scene, arm, "victim's body") },
  // The answer may be whole by then: released at the end of the response.
  { seam: "pool release", expect: [200, "cut"], run: (scene, arm) => victimAnsweredWith(scene, arm, "victim's body") },
  {
    seam: "client event",
    expect: [502, "cut"],
    // The client's half-close, read with its request, is the event that throws.
    run: (scene, arm) => (arm(), rawOutcome(scene.daemon.port, GET("/victim"), true)),
  },
  {
    seam: "timer",
    expect: [502],
    run: async (scene, arm) => {
      const outcome = rawOutcome(scene.daemon.port, GET("/victim"));
      await scene.app.arrivals(scene.held + 1);
      arm();
      scene.daemon.server.sweep();
      return outcome;
    },
  },
  {
    seam: "limiter admit",
    expect: [502],
    run: async (scene, arm) => {
      // Both slots held (beside and a filler), the victim queued, then admitted when the filler ends.
      const filler = send(scene.daemon.port, "/filler");
      const [, fillerHeld] = await scene.app.arrivals(scene.held + 1);
      const outcome = rawOutcome(scene.daemon.port, GET("/victim"));
      await untilSeries(scene.daemon.metricsPort!, "readiness_proxy_queue_length", 1);
      arm();
      fillerHeld!.release("filler");
      scene.t.equal((await filler).status, 200, "the filler answered");
      return outcome;
    },
  },
];

/** Injected at the seam's first passing after arming; disarmed whatever the test does. */
function armerFor(t: Test, seam: FaultSeam): () => void {
  t.teardown(() => armFaults(undefined));
  return () => {
    let passes = 0;
    armFaults((passed) => passed === seam && ++passes === 1);
  };
}

for (const testCase of CASES) {
  t.test(`a fault at "${testCase.seam}": that request only`, async (t) => {
    const app = await startGatedUpstream(t);
    const daemon = await startTestDaemon(t, ["--upstream", app.url, "--max-concurrency", "2", "--metrics-listen", "127.0.0.1:0", "--queue-timeout", "30s"]);
    const arm = armerFor(t, testCase.seam);
    // The sweep's first connection must be the victim's: it comes first, and the one beside after.
    const victimFirst = testCase.seam === "timer";
    let outcome: Outcome;
    let beside: Promise<Awaited<ReturnType<typeof send>>>;
    if (victimFirst) {
      const victim = testCase.run({ t, app, daemon, held: 0 }, arm);
      await app.arrivals(1);
      outcome = await victim;
      armFaults(undefined);
      beside = send(daemon.port, "/beside");
      await app.arrivals(2);
    } else {
      beside = send(daemon.port, "/beside");
      await app.arrivals(1);
      outcome = await testCase.run({ t, app, daemon, held: 1 }, arm);
    }
    armFaults(undefined);
    t.ok(testCase.expect.includes(outcome), `the victim got ${outcome}, one of ${testCase.expect.join(", ")}`);
    // The request beside it is answered whole.
    app.arrived.find((held) => held.url === "/beside")!.release("beside's body");
    const besideReply = await beside;
    t.equal(besideReply.status, 200);
    t.equal(besideReply.text(), "beside's body");
    // One error line with the stack, one count.
    const lines = daemon.logs.records.filter((record) => record.msg === "internal error");
    t.equal(lines.length, 1, "one internal error line");
    t.equal(lines[0]?.level, 50, "at error level");
    t.match(String((lines[0] as { err?: { stack?: string } })?.err?.stack), /InjectedFault: fault injected at/, "with the stack");
    t.equal(seriesValue(await scrapeText(daemon.metricsPort!), "readiness_proxy_internal_errors_total"), 1);
    // Both slots are free again: two requests reach the app at once, and nothing is left in flight.
    const before = app.arrived.length;
    const two = [send(daemon.port, "/after/1"), send(daemon.port, "/after/2")];
    for (const held of (await app.arrivals(before + 2)).slice(before)) held.release("after");
    for (const reply of await Promise.all(two)) t.equal(reply.status, 200);
    await untilSeries(daemon.metricsPort!, "readiness_proxy_requests_in_flight", 0);
  });
}

t.test('a fault at "tunnel data": that WebSocket only', async (t) => {
  const { startRawUpstream } = await import("../helpers/raw-upstream.js");
  const upstream = await startRawUpstream(t, (head, socket) => {
    if (!/upgrade: websocket/i.test(head)) {
      socket.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
      return;
    }
    socket.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
    socket.removeAllListeners("data");
    socket.pipe(socket);
  });
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url, "--metrics-listen", "127.0.0.1:0"]);
  const arm = armerFor(t, "tunnel data");
  arm();
  const closed = await new Promise<string>((resolve) => {
    const socket = connect(daemon.port, "127.0.0.1", () =>
      socket.write("GET /ws HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"),
    );
    let text = "";
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1");
      if (text.includes("\r\n\r\n") && !text.includes("frame")) socket.write("frame");
    });
    socket.on("error", () => {});
    socket.on("close", () => resolve(text));
  });
  armFaults(undefined);
  t.match(closed, /^HTTP\/1\.1 101 /, "the tunnel opened, then closed at the fault");
  t.equal((await send(daemon.port, "/after")).text(), "ok", "the next request is answered");
  t.equal(seriesValue(await scrapeText(daemon.metricsPort!), "readiness_proxy_internal_errors_total"), 1);
  t.equal(seriesValue(await scrapeText(daemon.metricsPort!), "readiness_proxy_upgraded_connections"), 0, "no tunnel left open");
});

// The HTTP/1.1 client's exchange with an h2c app (the one exchange, over http2/h2c-app-side.ts) follows the same rule: a 502 when nothing of the answer went out, not a bare cut.
t.test("a fault as an h2c app's head is handed on: the HTTP/1.1 client gets a 502, the next request a 200", async (t) => {
  const app = await startH2Upstream(t);
  app.handle((stream) => {
    stream.respond({ ":status": 200, "content-length": "2" });
    stream.end("ok");
  });
  const daemon = await startTestDaemon(t, ["--upstream", app.url, "--upstream-protocol", "h2c"]);
  t.teardown(() => armFaults(undefined));
  // The app stream's first event is its response head: the only "h2 stream event" this exchange has before an answer.
  let passes = 0;
  armFaults((seam) => seam === "h2 stream event" && ++passes === 1);
  t.equal(await rawOutcome(daemon.port, GET("/victim")), 502, "the victim gets our 502, not a cut");
  armFaults(undefined);
  const lines = daemon.logs.records.filter((record) => record.msg === "internal error");
  t.equal(lines.length, 1, "one internal error line");
  t.match(String((lines[0] as { err?: { stack?: string } })?.err?.stack), /InjectedFault: fault injected at h2 stream event/, "the defect, with its stack");
  t.equal(await rawOutcome(daemon.port, GET("/after")), 200, "the next request is relayed");
});
