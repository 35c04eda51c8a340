// Issue 24.2: bytes the app sends after a complete answer (an unasked response, a body after HEAD/204/304, a late 1xx) close that upstream connection and never reach another request or client.
import type { Socket } from "node:net";
import t, { type Test } from "tap";
import { send } from "../helpers/http-client.js";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { startRawUpstream } from "../helpers/raw-upstream.js";
import { untilSeries } from "../helpers/scrape.js";
import { exchange } from "./raw-exchange.js";

/** Looks like a whole response: a relay that parses it as the next request's answer hands it on. */
const STRAY = "HTTP/1.1 200 OK\r\nContent-Length: 7\r\nSet-Cookie: session=A\r\n\r\nSTRAYED";

/** What the app writes, in one write, for `/<case>`; every other path gets `answer to <path>`. */
const FIRST_ANSWERS: Record<string, { readonly bytes: string; readonly method: string; readonly status: number; readonly body: string }> = {
  "unasked-response": { method: "GET", bytes: `HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst${STRAY}`, status: 200, body: "first" },
  "head-with-body": { method: "HEAD", bytes: `HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n${STRAY}`, status: 200, body: "" },
  "304-with-body": { method: "GET", bytes: `HTTP/1.1 304 Not Modified\r\nETag: "x"\r\n\r\n${STRAY}`, status: 304, body: "" },
  "204-with-body": { method: "GET", bytes: `HTTP/1.1 204 No Content\r\n\r\n${STRAY}`, status: 204, body: "" },
  "late-interim": { method: "GET", bytes: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirstHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n" + STRAY, status: 200, body: "first" },
};

function answerFor(path: string): string {
  const first = FIRST_ANSWERS[path.slice(1)];
  if (first !== undefined) return first.bytes;
  const body = `answer to ${path}`;
  return `HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
}

async function strayingUpstream(t: Test) {
  const heads: string[] = [];
  const connections = new Set<Socket>();
  const upstream = await startRawUpstream(t, (head, socket) => {
    heads.push(head);
    connections.add(socket);
    const path = /^\w+ (\S+)/.exec(head)?.[1] ?? "";
    socket.write(answerFor(path));
  });
  return { ...upstream, heads, connections };
}

t.test("a second request pipelined behind each straying answer gets the app's own answer, never the stray", async (t) => {
  const upstream = await strayingUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  for (const [name, first] of Object.entries(FIRST_ANSWERS)) {
    const result = await exchange(daemon.port, {
      pieces: [Buffer.from(`${first.method} /${name} HTTP/1.1\r\nHost: a\r\n\r\nGET /second HTTP/1.1\r\nHost: a\r\n\r\n`)],
      responses: 2,
      isHead: (index) => index === 0 && first.method === "HEAD",
      then: "half-close",
      timeoutMs: 5_000,
    });
    t.same(result.finals, [first.status, 200], `${name}: two answers`);
    t.same(result.bodies, [first.body, "answer to /second"], `${name}: the second is the app's answer to /second`);
    t.notMatch(result.received, /STRAYED|session=A|103/, `${name}: nothing of the stray reached the client`);
  }
});

t.test("the stray closes its upstream connection: the next request goes on a new one", async (t) => {
  const upstream = await strayingUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  t.equal((await send(daemon.port, "/unasked-response")).text(), "first");
  t.equal((await send(daemon.port, "/later")).text(), "answer to /later", "a later request is answered by the app");
  t.equal(upstream.connections.size, 2, "the straying connection was not used again");
  t.equal(daemon.logs.records.filter((record) => record.msg === "upstream sent bytes no request asked for; connection closed").length, 1, "one debug line names the app's fault");
});

t.test("with --max-concurrency 1, a client queued behind a straying answer gets its own answer, not the stray's cookie", async (t) => {
  const heads: string[] = [];
  let heldFirst: Socket | undefined;
  const upstream = await startRawUpstream(t, (head, socket) => {
    heads.push(head);
    const path = /^\w+ (\S+)/.exec(head)?.[1] ?? "";
    // A's answer waits until B is queued, then carries the stray in the same write.
    if (path === "/unasked-response") heldFirst = socket;
    else socket.write(answerFor(path));
  });
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url, "--max-concurrency", "1", "--metrics-listen", "127.0.0.1:0"]);
  const a = send(daemon.port, "/unasked-response");
  await untilSeries(daemon.metricsPort!, "readiness_proxy_requests_in_flight", 1);
  const b = send(daemon.port, "/b");
  await untilSeries(daemon.metricsPort!, "readiness_proxy_queue_length", 1);
  heldFirst!.write(answerFor("/unasked-response"));
  const [replyA, replyB] = await Promise.all([a, b]);
  t.equal(replyA.text(), "first");
  t.equal(replyB.text(), "answer to /b", "B gets the app's answer to B");
  t.equal(replyB.headers["set-cookie"], undefined, "and not A's cookie");
});
