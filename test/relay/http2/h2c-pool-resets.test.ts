// Clients that leave have the proxy reset their streams on the pooled h2c session they share with others: past the app's rapid-reset limit (nghttp2's 1,000 at once, CVE-2023-44487) the app would end that session with every other client's stream on it.
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { setImmediate as nextTurn } from "node:timers/promises";
import t, { type Test } from "tap";
import { startTestDaemon } from "../../helpers/in-process-daemon.js";

/** Clients, each opening this many streams and resetting them all: past the app's 1,000, below our listener's own per-connection limit. */
const CLIENTS = 12;
const STREAMS = 100;
const BOUND_MS = 30_000;

interface ResetApp {
  readonly url: string;
  /** GET /hold streams, answered by the test. */
  readonly held: http2.ServerHttp2Stream[];
  /** Streams of GET /hang seen and closed (the proxy reset them): never answered. */
  readonly hangs: { opened: number; closed: number };
  /** Sessions the app ended with an error (its rapid-reset limit, for one). */
  readonly sessionErrors: string[];
}

/** node:http2 as the app: nghttp2's default limits, as most h2c apps have them. */
async function startResetApp(t: Test): Promise<ResetApp> {
  const app: ResetApp = { url: "", held: [], hangs: { opened: 0, closed: 0 }, sessionErrors: [] };
  const server = http2.createServer();
  server.on("stream", (stream, headers) => {
    stream.on("error", () => {});
    if (headers[":path"] === "/hold") return void app.held.push(stream);
    app.hangs.opened++;
    stream.on("close", () => app.hangs.closed++);
  });
  server.on("session", (session) => session.on("error", (error: Error) => app.sessionErrors.push(error.message)));
  server.on("sessionError", () => {});
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { ...app, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Waits, a turn at a time and bounded, for `holds` (counts the app or the proxy reach, not time). */
async function until(holds: () => boolean, what: string): Promise<void> {
  const deadline = performance.now() + BOUND_MS;
  while (!holds()) {
    if (performance.now() > deadline) throw new Error(`never: ${what}`);
    await nextTurn();
  }
}

t.test(`${CLIENTS * STREAMS} streams reset by the clients that left, beside one held answer on the same pooled session: the held answer comes whole`, async (t) => {
  const app = await startResetApp(t);
  const daemon = await startTestDaemon(t, ["--upstream", app.url, "--upstream-protocol", "h2c"]);
  const target = `http://127.0.0.1:${daemon.port}`;
  const honest = http2.connect(target);
  honest.on("error", () => {});
  t.teardown(() => honest.destroy());
  const answer = new Promise<{ status: number; body: string }>((resolve) => {
    const stream = honest.request({ ":path": "/hold" });
    let status = 0;
    let body = "";
    stream.on("response", (headers) => (status = Number(headers[":status"])));
    stream.on("data", (chunk: Buffer) => (body += chunk.toString()));
    stream.on("error", () => {});
    stream.on("close", () => resolve({ status, body }));
  });
  await until(() => app.held.length === 1, "the held request reached the app");
  const hangs = app.hangs;
  for (let round = 1; round <= CLIENTS; round++) {
    const client = http2.connect(target);
    client.on("error", () => {});
    const streams = Array.from({ length: STREAMS }, () => {
      const stream = client.request({ ":path": "/hang" });
      stream.on("error", () => {});
      return stream;
    });
    await until(() => hangs.opened >= round * STREAMS, `round ${round}'s streams reached the app`);
    for (const stream of streams) stream.close(http2.constants.NGHTTP2_CANCEL);
    await until(() => hangs.closed >= round * STREAMS, `round ${round}'s streams were reset at the app`);
    client.destroy();
  }
  const held = app.held[0]!;
  held.respond({ ":status": 200 });
  held.end("whole");
  const result = await answer;
  t.same(result, { status: 200, body: "whole" }, "the held answer, whole");
  t.same(app.sessionErrors, [], "the app ended no session");
});
