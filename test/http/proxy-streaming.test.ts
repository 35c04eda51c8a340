// Streaming and failure paths: SSE event by event, 502, 504, client aborts, failures mid-body, stale pooled sockets.
import { request, type IncomingMessage } from "node:http";
import t from "tap";
import { send } from "../helpers/http-client.js";
import { closedPort, deferred } from "../helpers/test-doubles.js";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { startUpstream } from "../helpers/upstream.js";

/** Fails a hung step after `ms` instead of waiting for tap's whole-file timeout. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing after ${ms} ms`)), ms);
  });
  return Promise.race([promise, guard]).finally(() => clearTimeout(timer));
}

function openStream(port: number, path: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, agent: false, headers: { accept: "text/event-stream" } }, resolve);
    req.on("error", reject);
    req.end();
  });
}

t.test("SSE: each event reaches the client before the upstream writes the next", async (t) => {
  const upstream = await startUpstream(t);
  const received = Array.from({ length: 5 }, () => deferred());
  upstream.handleRaw(async (_req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    for (let index = 0; index < received.length; index++) {
      res.write(`data: {"token":${index}}\n\n`);
      // The next event is written only once the client has this one: a buffering proxy hangs here.
      await received[index]!.promise;
    }
    res.end("data: [DONE]\n\n");
  });
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  const res = await openStream(daemon.port, "/v1/chat/completions");
  t.equal(res.headers["content-type"], "text/event-stream");
  let buffered = "";
  let next = 0;
  const done = new Promise<string>((resolve) => {
    res.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      while (next < received.length && buffered.includes(`{"token":${next}}`)) received[next++]!.resolve();
    });
    res.on("end", () => resolve(buffered));
  });
  const body = await within(done, 5000, "SSE stream");
  t.equal(next, received.length, "every event arrived on its own");
  t.match(body, /data: \[DONE\]\n\n$/);
});

t.test("a head whose body is not in the same read reaches the client before the body is written", async (t) => {
  const upstream = await startUpstream(t);
  const headSeen = deferred();
  upstream.handleRaw(async (_req, res) => {
    // A length the body will fill, but only once the client has the head: a proxy that held the
    // head for its body (to write both at once) would wait here for ever.
    res.writeHead(200, { "content-type": "text/plain", "content-length": "5" });
    res.flushHeaders();
    await headSeen.promise;
    res.end("later");
  });
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  const res = await within(openStream(daemon.port, "/slow-body"), 5000, "the head");
  t.equal(res.headers["content-length"], "5");
  headSeen.resolve();
  const body = await within(
    new Promise<string>((resolve) => {
      let text = "";
      res.on("data", (chunk: Buffer) => (text += chunk.toString()));
      res.on("end", () => resolve(text));
    }),
    5000,
    "the body",
  );
  t.equal(body, "later");
});

t.test("502 when the upstream port is closed, as JSON by default", async (t) => {
  const daemon = await startTestDaemon(t, ["--upstream", `http://127.0.0.1:${await closedPort()}`]);
  const reply = await send(daemon.port, "/v1/models", { headers: { accept: "*/*" } });
  t.equal(reply.status, 502);
  t.equal(reply.headers["content-type"], "application/json");
  t.equal(reply.headers["cache-control"], "no-store");
  const body = reply.json() as { error: { code: number; message: string; requestId: string } };
  t.match(body, { error: { code: 502, message: "upstream unavailable" } });
  t.equal(reply.headers["x-request-id"], body.error.requestId);
  const warning = daemon.logs.records.find((record) => record.msg === "upstream unavailable");
  t.match(warning, { level: 40, status: 502, code: "ECONNREFUSED", requestId: body.error.requestId });
});

t.test("504 when the head does not come within --response-header-timeout", async (t) => {
  const upstream = await startUpstream(t);
  upstream.handleRaw(() => {
    // Never answers; the socket is closed by the upstream's teardown.
  });
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url, "--response-header-timeout", "300ms"]);
  const reply = await send(daemon.port, "/slow");
  t.equal(reply.status, 504);
  t.match(reply.json(), { error: { code: 504, message: "upstream timeout" } });
  t.ok(daemon.logs.records.some((record) => record.code === "UND_ERR_HEADERS_TIMEOUT"));
});

t.test("a client that goes away aborts its upstream request", async (t) => {
  const upstream = await startUpstream(t);
  const upstreamSawClose = deferred();
  upstream.handleRaw((_req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write("data: first\n\n");
    res.on("close", () => upstreamSawClose.resolve());
  });
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  const res = await openStream(daemon.port, "/stream");
  await new Promise((resolve) => res.once("data", resolve));
  res.destroy();
  await within(upstreamSawClose.promise, 5000, "upstream close");
  t.pass("the upstream saw its connection closed");
  // The start's own warning (this daemon has no readiness check) is not about the client.
  const noChecks = "no readiness checks configured; /readyz always reports ready";
  t.notOk(daemon.logs.records.some((record) => record.level >= 40 && record.msg !== noChecks), "a client going away is not a warning");
});

t.test("an upstream failure after the head ends the client's response abruptly", async (t) => {
  const upstream = await startUpstream(t);
  upstream.handleRaw((_req, res) => {
    res.writeHead(200, { "content-length": "1000" });
    res.write("partial");
    // Once the head and the first bytes are out, the upstream dies.
    setImmediate(() => res.socket?.destroy());
  });
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  const outcome = await new Promise<string>((resolve) => {
    const req = request({ host: "127.0.0.1", port: daemon.port, path: "/", agent: false }, (res) => {
      res.on("data", () => {});
      res.on("end", () => resolve(res.complete ? "complete" : "broken"));
      res.on("error", () => resolve("broken"));
      res.on("aborted", () => resolve("broken"));
    });
    req.on("error", () => resolve("broken"));
    req.end();
  });
  t.equal(outcome, "broken", "never a truncated body that looks complete");
});

t.test("a request whose socket the upstream dropped before answering is retried once if idempotent", async (t) => {
  const upstream = await startUpstream(t);
  const seen = new Map<string, number>();
  upstream.handleRaw((req, res) => {
    const times = (seen.get(req.url ?? "") ?? 0) + 1;
    seen.set(req.url ?? "", times);
    // The first try of each /drop path finds the connection closed, as when an idle timeout races a reuse.
    if (req.url?.startsWith("/drop") && times === 1) {
      req.socket.destroy();
      return;
    }
    req.resume();
    req.on("end", () => res.end(`served ${req.method}`));
  });
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  t.equal((await send(daemon.port, "/drop-get")).text(), "served GET", "retried on a new socket");
  t.equal(seen.get("/drop-get"), 2);
  const post = await send(daemon.port, "/drop-post", { method: "POST", body: "x" });
  t.equal(post.status, 502, "a request with a body is never replayed");
  t.equal(seen.get("/drop-post"), 1);
  t.equal((await send(daemon.port, "/drop-post", { method: "POST", body: "x" })).text(), "served POST");
});
