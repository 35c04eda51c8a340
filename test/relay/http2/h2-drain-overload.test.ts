// h2 streams under the drain (serving through the delay, then GOAWAY, streams in flight finish), the limiter (each stream one request; a reset queued stream leaves the queue), idle close and a zero-window reader.
import http2 from "node:http2";
import t from "tap";
import { h2Connect, h2Request, startH2Upstream } from "../../helpers/h2.js";
import { startTestDaemon } from "../../helpers/in-process-daemon.js";
import { KEEP_ALIVE_TIMEOUT_MS } from "../../../src/relay/relay-server.js";
import { ManualTimers } from "../../helpers/test-doubles.js";

t.test("drain: served through the delay and the idle grace, then GOAWAY; a stream in flight finishes; then the connection closes", async (t) => {
  const app = await startH2Upstream(t);
  const held: http2.ServerHttp2Stream[] = [];
  let onHeld = (): void => {};
  app.handle((stream, headers) => {
    if (headers[":path"] === "/slow") {
      stream.respond({ ":status": 200 });
      stream.write("first ");
      held.push(stream);
      onHeld();
      return;
    }
    stream.respond({ ":status": 200 });
    stream.end("quick");
  });
  // The delay on hand-moved timers: the two requests it sends come within it however loaded the machine, and GOAWAY comes at its end, not before.
  const timers = new ManualTimers();
  const daemon = await startTestDaemon(t, ["--upstream", app.url, "--shutdown-delay", "2s"], undefined, { timers });
  const session = h2Connect(t, daemon.port);
  let goneAway = false;
  const goaway = new Promise<void>((resolve) => session.once("goaway", () => resolve())).then(() => (goneAway = true));
  const slow = h2Request(session, { ":path": "/slow" });
  await new Promise<void>((resolve) => (held.length > 0 ? resolve() : (onHeld = resolve)));
  const drained = daemon.shutdown.run("SIGTERM");
  const during = await h2Request(session, { ":path": "/during-delay" });
  t.equal(during.status, 200, "a new stream during --shutdown-delay is served");
  const readyz = await h2Request(session, { ":path": "/readyz" });
  t.equal(readyz.status, 503, "readiness says draining meanwhile");
  // A PING's answer: the client has read everything the proxy wrote before it.
  const pinged = () => new Promise<void>((resolve) => session.ping(() => resolve()));
  await timers.pass(2_000);
  await pinged();
  t.equal(goneAway, false, "the delay is over and the listener closed; an idle connection has its grace to show a request");
  await timers.pass(999);
  await pinged();
  t.equal(goneAway, false, "no GOAWAY 999 ms into the 1 s grace");
  await timers.pass(1);
  await goaway;
  t.pass("GOAWAY at the grace's end");
  held[0]!.end("last");
  const answer = await slow;
  t.equal(answer.status, 200);
  t.equal(answer.body.toString(), "first last", "the stream in flight finished after GOAWAY");
  t.equal(answer.rstCode, 0);
  await timers.until(drained, 10_000);
  t.ok(session.closed || session.destroyed, "the connection closed");
  t.notOk(daemon.logs.records.some((record) => record.msg === "shutdown timeout reached; closing remaining connections"), "nothing cut short");
});

t.test("overload: each stream is one request of the limiter; a queued stream that is reset leaves the queue", async (t) => {
  const app = await startH2Upstream(t);
  const held: http2.ServerHttp2Stream[] = [];
  let onHeld = (): void => {};
  const seen: string[] = [];
  app.handle((stream, headers) => {
    seen.push(String(headers[":path"]));
    if (headers[":path"] !== "/first") {
      stream.respond({ ":status": 200 });
      stream.end("later");
      return;
    }
    held.push(stream);
    onHeld();
  });
  const daemon = await startTestDaemon(t, ["--upstream", app.url, "--max-concurrency", "1", "--max-queue", "1", "--access-log"]);
  const session = h2Connect(t, daemon.port);
  const first = h2Request(session, { ":path": "/first" });
  await new Promise<void>((resolve) => (held.length > 0 ? resolve() : (onHeld = resolve)));
  const queued = session.request({ ":path": "/queued" });
  queued.on("error", () => {});
  // The queue holds one: the next is refused at once with the limiter's 503, in gRPC form for a gRPC call.
  const refused = await h2Request(session, { ":path": "/refused" });
  t.equal(refused.status, 503);
  t.equal(refused.headers["retry-after"], "1");
  t.match(JSON.parse(refused.body.toString()), { error: { code: 503, message: "overloaded" } });
  const grpcRefused = await h2Request(session, { ":method": "POST", ":path": "/pkg.S/M", "content-type": "application/grpc" }, Buffer.alloc(5));
  t.equal(grpcRefused.headers["grpc-status"], "14");
  t.equal(decodeURIComponent(String(grpcRefused.headers["grpc-message"])), "overloaded");
  queued.close(http2.constants.NGHTTP2_CANCEL);
  await new Promise<void>((resolve) => queued.once("close", () => resolve()));
  held[0]!.respond({ ":status": 200 });
  held[0]!.end("one");
  t.equal((await first).status, 200);
  t.equal((await h2Request(session, { ":path": "/after" })).status, 200, "the slot is free again");
  t.same(seen, ["/first", "/after"], "the reset queued stream never reached the app");
  const lines = daemon.logs.records.filter((record) => record.msg === "request");
  t.ok(lines.some((line) => line.path === "/queued" && line.aborted === true && typeof line.queueMs === "number"), "the stream that left the queue has its line");
  t.ok(lines.some((line) => line.path === "/refused" && line.status === 503));
});

t.test("an idle h2 connection gets GOAWAY after the HTTP/1.1 keep-alive time", async (t) => {
  const daemon = await startTestDaemon(t, []);
  const session = h2Connect(t, daemon.port);
  t.equal((await h2Request(session, { ":path": "/healthz" })).status, 200);
  const goaway = new Promise<void>((resolve) => session.once("goaway", () => resolve()));
  for (let tick = 0; tick < KEEP_ALIVE_TIMEOUT_MS / 1000 + 1; tick++) daemon.server.sweep();
  await goaway;
  t.pass("GOAWAY");
});

t.test("a reader that stops holds about one window, never the whole body", async (t) => {
  const app = await startH2Upstream(t);
  let accepted = 0;
  app.handle((stream) => {
    stream.respond({ ":status": 200 });
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const pump = (): void => {
      while (accepted < 64 * 1024 * 1024) {
        accepted += chunk.length;
        if (!stream.write(chunk)) return void stream.once("drain", pump);
      }
      stream.end();
    };
    pump();
  });
  const daemon = await startTestDaemon(t, ["--upstream", app.url]);
  const session = h2Connect(t, daemon.port);
  const stream = session.request({ ":path": "/big" });
  stream.on("error", () => {});
  await new Promise<void>((resolve) => stream.once("response", () => resolve()));
  stream.pause(); // reads nothing more: its window is never given back
  // Time for the app to push all it can (not ordering: the bound below holds however long we wait).
  await new Promise((resolve) => setTimeout(resolve, 1000));
  t.ok(accepted < 4 * 1024 * 1024, `the app could push ${accepted} bytes of 64 MiB while nobody read`);
  stream.close(http2.constants.NGHTTP2_CANCEL);
});
