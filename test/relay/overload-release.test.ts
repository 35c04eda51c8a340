// How slots and places in the queue are given back, through a real daemon and a slow app (CONTRACT §10): a client leaving the queue, the drain, WebSockets and streams holding their slot.
import { request, type IncomingMessage } from "node:http";
import { connect, type Socket } from "node:net";
import t from "tap";
import { send } from "../helpers/http-client.js";
import { startGatedUpstream } from "../helpers/gated-upstream.js";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { scrapeText, seriesValue, untilSeries } from "../helpers/scrape.js";
import { deferred, ManualTimers } from "../helpers/test-doubles.js";

const QUEUE_LENGTH = "readiness_proxy_queue_length";
const NEVER = "30s";
const WEBSOCKET_HEAD = "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n";

function limitOfOne(upstreamUrl: string, ...more: string[]): string[] {
  return ["--upstream", upstreamUrl, "--max-concurrency", "1", "--queue-timeout", NEVER, "--metrics-listen", "127.0.0.1:0", ...more];
}

/** A client on a raw socket, so the test decides when it goes away. */
function rawClient(port: number, bytes: string): Socket {
  const socket = connect(port, "127.0.0.1", () => socket.write(bytes));
  socket.on("error", () => {});
  return socket;
}

/** Whether the queue length reaches `expected` within a bound (false instead of a throw, for todo cases). */
function queueReaches(metricsPort: number, expected: number): Promise<boolean> {
  return untilSeries(metricsPort, QUEUE_LENGTH, expected, 3_000).then(
    () => true,
    () => false,
  );
}

// A queued request's body is held up to 64 KiB while the relay reads on, so its client's FIN is
// seen; after an upgrade head it stops reading (PAUSED_FOR_UPGRADE) until the app answers, so a
// WebSocket client that leaves the queue is not seen: README, Limits.
const STOPS_READING = "the proxy stops reading the client after an upgrade head while it is queued, so it never sees the client leave";
const LEAVERS = [
  { name: "a GET", bytes: "GET /leaver HTTP/1.1\r\nHost: a\r\n\r\n", todo: false as const },
  { name: "a POST whose body came with its head", bytes: "POST /leaver HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello", todo: false as const },
  { name: "a WebSocket handshake", bytes: `GET /leaver HTTP/1.1\r\nHost: a\r\n${WEBSOCKET_HEAD}\r\n`, todo: STOPS_READING },
];

for (const leaver of LEAVERS) {
  t.test(`${leaver.name} whose client leaves while queued: it leaves the queue, the app never sees it, the next one gets the slot`, { todo: leaver.todo }, async (t) => {
    const app = await startGatedUpstream(t);
    const daemon = await startTestDaemon(t, limitOfOne(app.url));
    const metricsPort = daemon.metricsPort!;
    const held = send(daemon.port, "/held");
    await app.arrivals(1);
    const client = rawClient(daemon.port, leaver.bytes);
    await untilSeries(metricsPort, QUEUE_LENGTH, 1);
    const next = send(daemon.port, "/next");
    await untilSeries(metricsPort, QUEUE_LENGTH, 2);
    client.destroy();
    t.ok(await queueReaches(metricsPort, 1), "the queue length drops when the client leaves");
    app.arrived[0]!.release();
    // A leaver wrongly admitted reaches the app first: answered, so that its slot frees and /next follows.
    for (let count = 2; count <= 3; count++) {
      const request = (await app.arrivals(count))[count - 1]!;
      request.release();
      if (request.url === "/next") break;
    }
    t.equal((await next).status, 200, "the next queued request got the slot");
    t.equal((await held).status, 200);
    t.same(app.arrived.map((request) => request.url), ["/held", "/next"], "the app never saw the request that left");
    const text = await scrapeText(metricsPort);
    t.equal(seriesValue(text, "readiness_proxy_queue_wait_seconds_count"), 3, "its wait counted with the others'");
    t.equal(seriesValue(text, 'readiness_proxy_rejected_requests_total{reason="queue_timeout"}'), 0, "not a rejection");
  });
}

t.test("drain with a queue: SIGTERM, then the queued requests are still served as slots free", async (t) => {
  const app = await startGatedUpstream(t);
  const daemon = await startTestDaemon(t, limitOfOne(app.url));
  const replies = [send(daemon.port, "/held")];
  await app.arrivals(1);
  for (const [index, path] of ["/queued-1", "/queued-2"].entries()) {
    replies.push(send(daemon.port, path));
    await untilSeries(daemon.metricsPort!, QUEUE_LENGTH, index + 1);
  }
  const drained = daemon.shutdown.run("SIGTERM");
  for (let index = 0; index < 3; index++) (await app.arrivals(index + 1))[index]!.release(`answer ${index}`);
  const answers = await Promise.all(replies);
  t.same(answers.map((reply) => `${reply.status} ${reply.text()} ${reply.headers.connection}`), ["200 answer 0 close", "200 answer 1 close", "200 answer 2 close"]);
  await drained;
  t.match(daemon.logs.records.find((record) => record.msg === "stopped"), { cutShort: false }, "all within the shutdown timeout");
  t.equal(daemon.logs.records.filter((record) => record.msg === "overloaded").length, 0);
});

t.test("drain with a queue that outlasts the shutdown timeout: the still-queued get 503 overloaded, not a reset", async (t) => {
  const app = await startGatedUpstream(t);
  const timers = new ManualTimers();
  const daemon = await startTestDaemon(t, limitOfOne(app.url, "--shutdown-timeout", "300ms"), undefined, { timers });
  const held = send(daemon.port, "/held").then(
    (reply) => `answered ${reply.status}`,
    (error: NodeJS.ErrnoException) => `cut: ${error.code}`,
  );
  await app.arrivals(1);
  const queued = [send(daemon.port, "/queued-1")];
  await untilSeries(daemon.metricsPort!, QUEUE_LENGTH, 1);
  queued.push(send(daemon.port, "/queued-2", { headers: { accept: "text/html" } }));
  await untilSeries(daemon.metricsPort!, QUEUE_LENGTH, 2);
  // The app never answers: the shutdown timeout (300 ms, after an idle grace as long) runs out, not before.
  const drained = daemon.shutdown.run("SIGTERM");
  let answered = 0;
  for (const reply of queued) void reply.finally(() => answered++).catch(() => {});
  await timers.pass(0);
  await timers.pass(300);
  await timers.pass(299);
  t.equal(answered, 0, "299 ms into the shutdown timeout: still queued");
  t.notOk(daemon.logs.messages().includes("stopped"), "and the shutdown still waits");
  await timers.pass(1);
  await drained;
  const [json, page] = await Promise.all(queued);
  t.equal(json!.status, 503);
  t.equal(json!.headers["retry-after"], "1");
  t.match(json!.json(), { error: { code: 503, message: "overloaded" } });
  t.equal(page!.status, 503);
  t.equal(page!.headers["retry-after"], "1");
  t.equal(page!.headers["content-type"], "text/html; charset=utf-8");
  t.match(await held, /^cut: /, "the request the app held is cut when the time is up");
  t.equal(app.arrived.length, 1, "the queued requests never reached the app");
  const messages = daemon.logs.messages();
  t.ok(messages.indexOf("shutdown timeout reached; closing remaining connections") < messages.indexOf("stopped"));
  t.match(daemon.logs.records.find((record) => record.msg === "overloaded"), { level: 40, reason: "queue timeout" });
});

t.test("a WebSocket holds its slot while open and gives it back when it closes", async (t) => {
  const app = await startGatedUpstream(t);
  app.server.on("upgrade", (_req: IncomingMessage, socket: Socket) => {
    socket.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
    socket.pipe(socket);
  });
  const daemon = await startTestDaemon(t, limitOfOne(app.url, "--access-log"));
  const websocket = await new Promise<Socket>((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port: daemon.port, path: "/ws", agent: false, headers: { connection: "Upgrade", upgrade: "websocket", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==", "sec-websocket-version": "13" } });
    req.on("upgrade", (_res, socket: Socket) => resolve(socket));
    req.on("error", reject);
    req.end();
  });
  const echoed = new Promise<string>((resolve) => websocket.once("data", (chunk: Buffer) => resolve(chunk.toString())));
  websocket.write("ping");
  t.equal(await echoed, "ping", "the tunnel is open");
  const after = send(daemon.port, "/after");
  await untilSeries(daemon.metricsPort!, QUEUE_LENGTH, 1);
  const text = await scrapeText(daemon.metricsPort!);
  t.equal(seriesValue(text, "readiness_proxy_upgraded_connections"), 1);
  t.equal(seriesValue(text, "readiness_proxy_requests_in_flight"), 0, "an open tunnel is not in flight, yet holds its slot");
  t.equal(app.arrived.length, 0, "the next request waits while the WebSocket is open");
  websocket.destroy();
  (await app.arrivals(1))[0]!.release();
  t.equal((await after).status, 200, "admitted once the WebSocket closed");
  t.match(daemon.logs.records.find((record) => record.msg === "request" && record.path === "/ws"), { status: 101 }, "its access line came at its close");
});

t.test("a streaming response holds its slot until it ends", async (t) => {
  const app = await startGatedUpstream(t);
  const daemon = await startTestDaemon(t, limitOfOne(app.url));
  const firstEvent = deferred();
  const streamed = new Promise<string>((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port: daemon.port, path: "/stream", agent: false }, (res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => {
        body += chunk.toString();
        firstEvent.resolve();
      });
      res.on("end", () => resolve(body));
    });
    req.on("error", reject);
    req.end();
  });
  const [stream] = await app.arrivals(1);
  stream!.res.writeHead(200, { "content-type": "text/event-stream" });
  stream!.res.write("data: 1\n\n");
  await firstEvent.promise;
  const next = send(daemon.port, "/next");
  await untilSeries(daemon.metricsPort!, QUEUE_LENGTH, 1);
  t.equal(app.arrived.length, 1, "the next request waits while the stream runs");
  stream!.release("data: 2\n\n");
  (await app.arrivals(2))[1]!.release();
  t.equal(await streamed, "data: 1\n\ndata: 2\n\n");
  t.equal((await next).status, 200, "admitted when the stream ended");
});
