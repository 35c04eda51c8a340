// Issue 24.3: interim (1xx) answers count against the client's backpressure like bodies, and at most 32 are relayed per response.
import { connect, type Socket } from "node:net";
import t from "tap";
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
