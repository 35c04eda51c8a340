// Issue 24.3: interim (1xx) answers count against the client's backpressure like bodies, and at most 32 are relayed per response.
import { connect, type Socket } from "node:net";
import t, { type Test } from "tap";
import { h2Connect, startH2Upstream } from "../helpers/h2.js";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { startRawUpstream } from "../helpers/raw-upstream.js";
import { exchange } from "./raw-exchange.js";

const EARLY_HINTS = "HTTP/1.1 103 Early Hints\r\nLink: </x>; rel=preload\r\n\r\n";
const OK = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

t.test("up to 32 interim heads pass, then the final answer", async (t) => {
  const upstream = await startRawUpstream(t, (_head, socket) => socket.write(EARLY_HINTS.repeat(32) + OK));
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  const result = await exchange(daemon.port, { pieces: [Buffer.from("GET / HTTP/1.1\r\nHost: a\r\n\r\n")], responses: 1, then: "half-close", timeoutMs: 5_000 });
  t.equal(result.interim.length, 32);
  t.same(result.finals, [200]);
  t.same(result.bodies, ["ok"]);
});

t.test("a 33rd interim head is the app's fault: a 502, and the connection to the app is dropped", async (t) => {
  let upstreamClosed = false;
  let upstreamSocketClosed: (() => void) | undefined;
  const upstream = await startRawUpstream(t, (_head, socket) => {
    socket.on("close", () => {
      upstreamClosed = true;
      upstreamSocketClosed?.();
    });
    socket.write(EARLY_HINTS.repeat(33) + OK);
  });
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  const result = await exchange(daemon.port, { pieces: [Buffer.from("GET / HTTP/1.1\r\nHost: a\r\n\r\n")], responses: 1, then: "half-close", timeoutMs: 5_000 });
  t.equal(result.interim.length, 32, "32 relayed");
  t.same(result.finals, [502]);
  await new Promise<void>((resolve) => (upstreamClosed ? resolve() : upstreamSocketClosed = resolve));
  t.ok(upstreamClosed, "the connection to the app was closed");
});

t.test("an endless stream of interim heads to a client that reads nothing: the 33rd ends it, the app's connection closes, the proxy holds little", async (t) => {
  let upstreamSocket: Socket | undefined;
  let upstreamGone = false;
  let written = 0;
  const upstream = await startRawUpstream(t, (_head, socket) => {
    upstreamSocket = socket;
    socket.on("close", () => (upstreamGone = true));
    // Writes interim heads for as long as the proxy reads them (bounded: 64 MiB at most).
    const pump = () => {
      while (written < 64 * 1024 * 1024) {
        written += EARLY_HINTS.length;
        if (!socket.write(EARLY_HINTS)) {
          socket.once("drain", pump);
          return;
        }
      }
    };
    pump();
  });
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  let accepted: Socket | undefined;
  for (const server of daemon.server.sockets.servers) server.on("connection", (socket: Socket) => (accepted = socket));
  const client = connect({ port: daemon.port, host: "127.0.0.1" });
  client.on("error", () => {});
  t.teardown(() => client.destroy());
  client.pause();
  client.write("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
  // The app writes for as long as the proxy reads: a proxy that buffers for the client takes
  // it all (MBs a second); one that pauses the app stops within the kernel's socket buffers.
  // Watched for a bounded 3 s: the assertions are on amounts, not on when they were reached.
  for (let round = 0; round < 30 && written < 32 * 1024 * 1024 && !upstreamGone; round++) await new Promise((resolve) => setTimeout(resolve, 100));
  t.ok(upstreamGone, "the app's connection was closed");
  t.ok(written < 32 * 1024 * 1024, `the app could write only ${written} bytes before being held`);
  // What the proxy holds for the client beyond the kernel's buffers: a read or two, not the flood.
  t.ok(accepted !== undefined && accepted.writableLength < 1024 * 1024, `the proxy holds ${accepted?.writableLength} bytes for the client`);
  upstreamSocket?.destroy();
});

/** One GET over h2 to the proxy: how many interim heads reached the client, and the final status. */
async function overH2(t: Test, port: number): Promise<{ interim: number; status: number }> {
  const session = h2Connect(t, port);
  return new Promise((resolve) => {
    const stream = session.request({ ":path": "/" });
    let interim = 0;
    let status = 0;
    stream.on("headers", () => interim++);
    stream.on("response", (headers) => (status = Number(headers[":status"])));
    stream.on("error", () => {});
    stream.resume();
    stream.on("close", () => resolve({ interim, status }));
  });
}

/** An h2c app that sends `count` 103s, then 200 "ok" if that is within the limit (else nothing more: only a reset closes the stream); `closed` resolves with the stream's close code. */
async function h2cAppWithHints(t: Test, count: number): Promise<{ url: string; closed: Promise<number> }> {
  const app = await startH2Upstream(t);
  let streamClosed: (code: number) => void = () => {};
  const closed = new Promise<number>((resolve) => (streamClosed = resolve));
  app.handle((stream) => {
    stream.on("close", () => streamClosed(stream.rstCode ?? 0));
    for (let index = 0; index < count; index++) stream.additionalHeaders({ ":status": 103, link: "</x>; rel=preload" });
    if (count > 32) return;
    stream.respond({ ":status": 200 });
    stream.end("ok");
  });
  return { url: app.url, closed };
}

t.test("the same limit whatever the protocols: 32 interim heads pass, the 33rd is a 502 and the app is let go", async (t) => {
  for (const [count, status] of [[32, 200], [33, 502]] as const) {
    // h2 client, HTTP/1.1 app.
    let appSocketClosed: () => void = () => {};
    const appLetGo = new Promise<void>((resolve) => (appSocketClosed = resolve));
    const h1App = await startRawUpstream(t, (_head, socket) => {
      socket.on("close", () => appSocketClosed());
      socket.write(EARLY_HINTS.repeat(count) + OK);
    });
    const toH1 = await startTestDaemon(t, ["--upstream", h1App.url, "--upstream-protocol", "http1"]);
    t.same(await overH2(t, toH1.port), { interim: Math.min(count, 32), status }, `h2 client, HTTP/1.1 app, ${count} sent`);
    if (status === 502) await appLetGo;

    // h2 client, h2c app.
    const h2cApp = await h2cAppWithHints(t, count);
    const toH2c = await startTestDaemon(t, ["--upstream", h2cApp.url]);
    t.same(await overH2(t, toH2c.port), { interim: Math.min(count, 32), status }, `h2 client, h2c app, ${count} sent`);
    if (status === 502) t.equal(await h2cApp.closed, 8 /* CANCEL */, "the app's stream was reset");

    // HTTP/1.1 client, h2c app.
    const h2cAppForH1 = await h2cAppWithHints(t, count);
    const h1ToH2c = await startTestDaemon(t, ["--upstream", h2cAppForH1.url, "--upstream-protocol", "h2c"]);
    const result = await exchange(h1ToH2c.port, { pieces: [Buffer.from("GET / HTTP/1.1\r\nHost: a\r\n\r\n")], responses: 1, then: "half-close", timeoutMs: 5_000 });
    t.equal(result.interim.length, Math.min(count, 32), `HTTP/1.1 client, h2c app, ${count} sent: the interim heads relayed`);
    t.same(result.finals, [status]);
    if (status === 502) t.equal(await h2cAppForH1.closed, 8 /* CANCEL */, "the app's stream was reset");
  }
});
