// Hostile requests, each as raw bytes on its own connection: a 4xx, the connection closed by the proxy, not one byte at the upstream; then the edge cases that must pass.
import { connect } from "node:net";
import t from "tap";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { startRecordingUpstream } from "../helpers/recording-upstream.js";
import { deferred } from "../helpers/test-doubles.js";
import { exchange, ResponseReader, showBytes } from "./raw-exchange.js";
import { collectAfterBarrier } from "./upstream-barrier.js";

const HOST = "Host: app.example\r\n";
const get = (headers = "", target = "/") => `GET ${target} HTTP/1.1\r\n${HOST}${headers}\r\n`;
const post = (headers: string, body: string) => `POST /upload HTTP/1.1\r\n${HOST}${headers}\r\n${body}`;
const chunked = (body: string) => post("Transfer-Encoding: chunked\r\n", body);
/** A valid request pipelined behind a bad one: it must never reach the upstream either. */
const NEXT = "GET /pipelined HTTP/1.1\r\nHost: app.example\r\n\r\n";

interface HostileCase {
  readonly bytes: string;
  /** Statuses the proxy may answer with: node:http's own today. */
  readonly statuses: readonly number[];
  /** Or no answer at all, only the close (what node:http does today). */
  readonly orSilence?: true;
}

// node:http's daemon failed several of these: it forwarded the head and the first body bytes of
// a request whose body turned out malformed, parsed on after its own 400 (forwarding what was
// pipelined behind it), took HTTP/0.9 and 2.0 request lines for 1.1, and dropped a Transfer-Encoding
// of `gzip, chunked` with its codings. The relay answers each as below.

/** The relay's answers (llhttp's HPE_* codes in comments). */
const CASES: Record<string, HostileCase> = {
  "Content-Length and Transfer-Encoding: chunked": { bytes: post("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n"), statuses: [400] }, // INVALID_TRANSFER_ENCODING
  "Transfer-Encoding: chunked and Content-Length": { bytes: post("Transfer-Encoding: chunked\r\nContent-Length: 5\r\n", "0\r\n\r\n"), statuses: [400] }, // INVALID_CONTENT_LENGTH
  "two different Content-Lengths": { bytes: post("Content-Length: 5\r\nContent-Length: 6\r\n", "hello!"), statuses: [400] }, // UNEXPECTED_CONTENT_LENGTH
  "the same Content-Length twice": { bytes: post("Content-Length: 5\r\nContent-Length: 5\r\n", "hello"), statuses: [400] },
  "Content-Length: 5, 5": { bytes: post("Content-Length: 5, 5\r\n", "hello"), statuses: [400] }, // INVALID_CONTENT_LENGTH
  "Content-Length: +5": { bytes: post("Content-Length: +5\r\n", "hello"), statuses: [400] },
  "Content-Length: -5": { bytes: post("Content-Length: -5\r\n", "hello"), statuses: [400] },
  "Content-Length: 1 2": { bytes: post("Content-Length: 1 2\r\n", "hello"), statuses: [400] },
  "Content-Length: 5a": { bytes: post("Content-Length: 5a\r\n", "hello"), statuses: [400] },
  "Content-Length: 0x5": { bytes: post("Content-Length: 0x5\r\n", "hello"), statuses: [400] },
  "Content-Length: (empty)": { bytes: post("Content-Length:\r\n", "hello"), statuses: [400] },
  "Content-Length past 2^64": { bytes: post("Content-Length: 99999999999999999999999\r\n", "hello"), statuses: [400] },
  "obs-fold with a space": { bytes: get("X-A: 1\r\n 2\r\n"), statuses: [400] }, // INVALID_HEADER_TOKEN
  "obs-fold with a tab": { bytes: get("X-A: 1\r\n\t2\r\n"), statuses: [400] },
  "the first header line folded": { bytes: `GET / HTTP/1.1\r\n ${HOST}\r\n`, statuses: [400] }, // UNEXPECTED_SPACE
  "bare LF line endings": { bytes: `GET / HTTP/1.1\n${HOST.replace("\r", "")}\n`, statuses: [400] }, // INVALID_VERSION
  "a header line ended by a bare LF": { bytes: get("X-A: 1\n"), statuses: [400] }, // CR_EXPECTED
  "a bare CR ending the request line": { bytes: `GET / HTTP/1.1\r${HOST}\r\n`, statuses: [400] }, // STRICT
  "a bare CR inside a header value": { bytes: get("X-A: 1\r2\r\n"), statuses: [400] }, // LF_EXPECTED
  "a bare LF inside a header value": { bytes: get("X-A: 1\n2\r\n"), statuses: [400] },
  "a NUL inside a header value": { bytes: get("X-A: 1\x002\r\n"), statuses: [400] }, // INVALID_HEADER_TOKEN
  "a DEL inside a header value": { bytes: get("X-A: 1\x7f2\r\n"), statuses: [400] },
  "a space before the colon (Host)": { bytes: "GET / HTTP/1.1\r\nHost : app.example\r\n\r\n", statuses: [400] },
  "a space before the colon": { bytes: get("X-A : 1\r\n"), statuses: [400] },
  "an empty header name": { bytes: get(": 1\r\n"), statuses: [400] },
  "a header line without a colon": { bytes: get("X-A\r\n"), statuses: [400] },
  "chunk size not hex": { bytes: chunked("zz\r\nhello\r\n0\r\n\r\n"), statuses: [400] }, // INVALID_CHUNK_SIZE
  "chunk size past 2^64": { bytes: chunked("FFFFFFFFFFFFFFFFF\r\nhello\r\n0\r\n\r\n"), statuses: [400] },
  "negative chunk size": { bytes: chunked("-5\r\nhello\r\n0\r\n\r\n"), statuses: [400] },
  "a space before the chunk size": { bytes: chunked(" 5\r\nhello\r\n0\r\n\r\n"), statuses: [400] },
  "a space after the chunk size": { bytes: chunked("5 \r\nhello\r\n0\r\n\r\n"), statuses: [400] },
  "chunk size 0x5": { bytes: chunked("0x5\r\nhello\r\n0\r\n\r\n"), statuses: [400] },
  "chunk size ended by a bare LF": { bytes: chunked("5\nhello\r\n0\r\n\r\n"), statuses: [400] }, // CR_EXPECTED
  "chunk extension: a bare semicolon": { bytes: chunked("5;\r\nhello\r\n0\r\n\r\n"), statuses: [400] }, // STRICT
  "chunk extension: a space before it": { bytes: chunked("5 ;a=b\r\nhello\r\n0\r\n\r\n"), statuses: [400] }, // INVALID_CHUNK_SIZE
  "chunk extension: a bare LF inside": { bytes: chunked("5;a\nb\r\nhello\r\n0\r\n\r\n"), statuses: [400] },
  "chunk extension: a bare CR inside": { bytes: chunked("5;a\rb\r\nhello\r\n0\r\n\r\n"), statuses: [400] },
  "chunk extension: an unterminated quote": { bytes: chunked('5;a="b\r\nhello\r\n0\r\n\r\n'), statuses: [400] },
  "chunk extension: a NUL": { bytes: chunked("5;a\x00\r\nhello\r\n0\r\n\r\n"), statuses: [400] },
  "no CRLF after chunk data": { bytes: chunked("5\r\nhelloX0\r\n\r\n"), statuses: [400] }, // STRICT
  "a bare LF after chunk data": { bytes: chunked("5\r\nhello\n0\r\n\r\n"), statuses: [400] }, // CR_EXPECTED
  "a control character in the target": { bytes: get("", "/a\x01b"), statuses: [400] }, // INVALID_URL
  "a DEL in the target": { bytes: get("", "/a\x7fb"), statuses: [400] },
  "a tab in the target": { bytes: get("", "/a\tb"), statuses: [400] },
  "a NUL in the target": { bytes: get("", "/a\x00b"), statuses: [400] },
  "a byte above 0x7f in the target": { bytes: get("", "/caf\xe9"), statuses: [400] },
  "a head over 16 KiB": { bytes: get(`X-Big: ${"a".repeat(17 * 1024)}\r\n`), statuses: [431] }, // HEADER_OVERFLOW
  "an invalid method token": { bytes: `G@T / HTTP/1.1\r\n${HOST}\r\n`, statuses: [400] }, // INVALID_METHOD
  "an unknown method": { bytes: `FOO / HTTP/1.1\r\n${HOST}\r\n`, statuses: [400] },
  "a lower-case method": { bytes: `get / HTTP/1.1\r\n${HOST}\r\n`, statuses: [400] },
  // The HTTP/2 preface as a connection's first bytes is h2c now (CONTRACT §13); after a request it
  // is still a 400: test/relay/http2/h2-health.test.ts.
  "HTTP/1.2": { bytes: `GET / HTTP/1.2\r\n${HOST}\r\n`, statuses: [400] }, // INVALID_VERSION
  "lower-case http/1.1": { bytes: `GET / http/1.1\r\n${HOST}\r\n`, statuses: [400] }, // INVALID_CONSTANT
  "HTTP/0.9 (no version)": { bytes: "GET /\r\n\r\n", statuses: [400, 505] },
  "HTTP/0.9 spelled out": { bytes: `GET / HTTP/0.9\r\n${HOST}\r\n`, statuses: [400, 505] },
  "HTTP/2.0 in a request line": { bytes: `GET / HTTP/2.0\r\n${HOST}\r\n`, statuses: [400, 505] },
  "Transfer-Encoding: gzip, chunked": {
    bytes: post("Transfer-Encoding: gzip, chunked\r\n", "0\r\n\r\n"),
    statuses: [400, 501],
  },
  "Transfer-Encoding: (empty)": { bytes: post("Transfer-Encoding:\r\n", ""), statuses: [400] },
  "Transfer-Encoding: chunked, gzip": { bytes: post("Transfer-Encoding: chunked, gzip\r\n", "0\r\n\r\n"), statuses: [400] }, // INVALID_TRANSFER_ENCODING
  "Transfer-Encoding: xchunked": { bytes: post("Transfer-Encoding: xchunked\r\n", "0\r\n\r\n"), statuses: [400] },
  "Transfer-Encoding: gzip": { bytes: post("Transfer-Encoding: gzip\r\n", "0\r\n\r\n"), statuses: [400] },
  "Transfer-Encoding: chunked, chunked": { bytes: post("Transfer-Encoding: chunked, chunked\r\n", "0\r\n\r\n"), statuses: [400] },
  "Transfer-Encoding: chunked on two lines": { bytes: post("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n"), statuses: [400] },
  "HTTP/1.1 without Host": { bytes: "GET / HTTP/1.1\r\n\r\n", statuses: [400] }, // node:http's requireHostHeader
  "two Host lines": { bytes: get(HOST), statuses: [400] }, // the daemon's own 400 (RFC 9112 §3.2); node:http accepts it
  "a bad header, then a valid request": { bytes: get("X-A: 1\x002\r\n") + NEXT, statuses: [400] },
  "a bad chunk size, then a valid request": { bytes: chunked("zz\r\nhello\r\n0\r\n\r\n") + NEXT, statuses: [400] },
  "an oversized head, then a valid request": { bytes: get(`X-Big: ${"a".repeat(17 * 1024)}\r\n`) + NEXT, statuses: [431] },
  "HTTP/1.1 without Host, then a valid request": { bytes: "GET / HTTP/1.1\r\n\r\n" + NEXT, statuses: [400] },
  "two Host lines, then a valid request": { bytes: get(HOST) + NEXT, statuses: [400] },
  "target *, then a valid request": { bytes: get("", "*") + NEXT, statuses: [400] },
  // Not a hostile request but another path in node:http: CONNECT without a listener is dropped without an answer.
  "CONNECT": { bytes: `CONNECT app.example:443 HTTP/1.1\r\n${HOST}\r\n`, statuses: [400, 405, 501], orSilence: true },
};

t.test("each hostile request: its 4xx, the connection closed by the proxy, nothing at the upstream", async (t) => {
  const upstream = await startRecordingUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  // Leaves a kept-alive upstream connection idle for the first case (each barrier does for the
  // next): a head forwarded too early would be written at once, not after a connect.
  await collectAfterBarrier(daemon.port, upstream);
  for (const [name, hostile] of Object.entries(CASES)) {
    await t.test(name, async (t) => {
      const sent = showBytes(hostile.bytes);
      const result = await exchange(daemon.port, { pieces: [Buffer.from(hostile.bytes, "latin1")], responses: 1, then: "await-close", timeoutMs: 2_000 });
      const activity = await collectAfterBarrier(daemon.port, upstream);
      const diagnostics = { sent, received: showBytes(result.received) };
      t.equal(result.timedOut, undefined, "the proxy closed the connection within 2 s", diagnostics);
      t.ok(result.closedByPeer, "the proxy closed the connection", diagnostics);
      const answeredRight = result.finals.length === 1 && hostile.statuses.includes(result.finals[0]!);
      const silentRight = result.finals.length === 0 && hostile.orSilence === true;
      t.ok(answeredRight || silentRight, `one answer: ${hostile.statuses.join(" or ")}${hostile.orSilence ? ", or none" : ""}`, { ...diagnostics, found: result.finals });
      t.same(activity.requests.map((request) => request.url), [], "no request reached the upstream", diagnostics);
      t.equal(activity.bytes, "", "not one byte reached the upstream", diagnostics);
      t.equal(upstream.cutHanging(), 0, "no upstream connection left waiting for a request", diagnostics);
    });
  }
  t.same(upstream.parseErrors(), [], "the upstream never received bytes its parser refused");
});

/** A valid request with a bad one (or any bytes after `Connection: close`) behind it on the same connection. */
const VALID_THEN_BAD: Record<string, { readonly bytes: string }> = {
  "a valid GET, then a NUL in a header": { bytes: get("", "/first") + get("X-A: 1\x002\r\n", "/second") },
  "a valid POST, then a request whose chunk size is bad": {
    bytes: post("Content-Length: 5\r\n", "hello").replace("/upload", "/first") + chunked("zz\r\nhello\r\n0\r\n\r\n"),
    // The second head is valid, but its body is not: it must never be dispatched upstream, or its
    // upstream request would wait for a body forever (node:http's daemon did exactly that).
  },
  "Connection: close, then a valid request": { bytes: get("Connection: close\r\n", "/first") + NEXT },
};

t.test("a valid request, then a bad one: the app's answer to the first, then the connection closed; the second never reaches the app", async (t) => {
  const upstream = await startRecordingUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  await collectAfterBarrier(daemon.port, upstream);
  for (const [name, { bytes }] of Object.entries(VALID_THEN_BAD)) {
    await t.test(name, async (t) => {
      const result = await exchange(daemon.port, { pieces: [Buffer.from(bytes, "latin1")], responses: 2, then: "await-close", timeoutMs: 2_000 });
      const activity = await collectAfterBarrier(daemon.port, upstream);
      // node:http's daemon answered 400 to the first request as soon as it parsed the second: the
      // app ran the first (a POST may have charged a card) and the client was told it was malformed.
      const diagnostics = { sent: showBytes(bytes), received: showBytes(result.received) };
      t.equal(result.timedOut, undefined, "the proxy closed the connection within 2 s", diagnostics);
      t.ok(result.closedByPeer, "the proxy closed the connection", diagnostics);
      t.same(result.bodies[0] === undefined ? [] : [result.finals[0], result.bodies[0]], [200, "/first"], "the first answer is the app's", diagnostics);
      t.ok(result.finals.length <= 2 && result.finals.slice(1).every((status) => status >= 400 && status < 500), "then at most a 4xx", { ...diagnostics, found: result.finals });
      t.same(
        activity.requests.map((request) => [request.url, request.complete]),
        [["/first", true]],
        "the app got the first request whole, nothing of the second",
        diagnostics,
      );
      // Cut here either way: a connection left hanging would also hang this test's teardown.
      t.equal(upstream.cutHanging(), 0, "no upstream connection left waiting for a request", diagnostics);
    });
  }
  t.same(upstream.parseErrors(), [], "the upstream never received bytes its parser refused");
});

t.test("a chunked request with extensions and trailers: the body arrives whole; a trailer never becomes a header", async (t) => {
  const upstream = await startRecordingUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  const bytes =
    "POST /upload HTTP/1.1\r\nHost: app.example\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n" +
    '5;name=value;q="a \\" b"\r\nhello\r\n00a\r\n world, 12\r\nB\r\n3456789abcd\r\n0\r\nX-Sum: 42\r\n\r\n';
  const result = await exchange(daemon.port, { pieces: [Buffer.from(bytes, "latin1")], responses: 1, then: "half-close", timeoutMs: 2_000 });
  const activity = await collectAfterBarrier(daemon.port, upstream);
  t.same([result.finals, result.bodies], [[200], ["/upload"]], "answered by the app", { received: showBytes(result.received) });
  const [request] = activity.requests;
  t.equal(activity.requests.length, 1, "one request upstream");
  t.equal(Buffer.concat(request?.body ?? []).toString("latin1"), "hello world, 123456789abcd", "the decoded body");
  t.ok(request?.complete, "complete");
  const names = (request?.rawHeaders ?? []).filter((_, index) => index % 2 === 0).map((name) => name.toLowerCase());
  t.notOk(names.includes("x-sum"), "the trailer field is not in the forwarded head");
  t.notOk(names.includes("trailer"), "Trailer is hop-by-hop");
});

t.test("a Content-Length request with a second pipelined behind it: both answered in order, the app sees two requests", async (t) => {
  const upstream = await startRecordingUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  // The first body looks like the start of a request: only Content-Length says where it ends.
  const first = "POST /one HTTP/1.1\r\nHost: app.example\r\nContent-Length: 18\r\n\r\nGET /smuggled HTTP";
  const second = "POST /two HTTP/1.1\r\nHost: app.example\r\nContent-Length: 3\r\n\r\nabc";
  for (const pieces of [[first + second], [first.slice(0, 50), first.slice(50) + second.slice(0, 7), second.slice(7)]]) {
    const result = await exchange(daemon.port, { pieces: pieces.map((piece) => Buffer.from(piece, "latin1")), responses: 2, then: "half-close", timeoutMs: 2_000 });
    const activity = await collectAfterBarrier(daemon.port, upstream);
    t.same([result.finals, result.bodies], [[200, 200], ["/one", "/two"]], `${pieces.length} writes: both answers, in order`, { received: showBytes(result.received) });
    t.same(
      activity.requests.map((request) => [request.method, request.url, Buffer.concat(request.body).toString("latin1"), request.complete]),
      [
        ["POST", "/one", "GET /smuggled HTTP", true],
        ["POST", "/two", "abc", true],
      ],
      `${pieces.length} writes: the app sees each request with its own body`,
    );
  }
});

t.test("Expect: 100-continue: the proxy itself answers 100, the client sends its body, the app's answer follows", async (t) => {
  const upstream = await startRecordingUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  const reader = new ResponseReader(() => false);
  const sawContinue = deferred();
  const closed = deferred();
  const socket = connect(daemon.port, "127.0.0.1", () => {
    socket.write("PUT /upload HTTP/1.1\r\nHost: app.example\r\nExpect: 100-continue\r\nContent-Length: 11\r\n\r\n");
  });
  socket.on("data", (chunk: Buffer) => {
    reader.push(chunk);
    if (reader.interim.length > 0) sawContinue.resolve();
    if (reader.finals.length > 0) socket.end();
  });
  socket.on("close", () => closed.resolve());
  const bound = setTimeout(() => socket.destroy(), 2_000);
  await sawContinue.promise;
  // node:http answers 100 as soon as it has the head; the app has been sent nothing (undici
  // waits for the body), so the app never has to answer an expectation of its own.
  t.same(upstream.take().requests, [], "the 100 came before the app received anything");
  socket.write("hello world");
  await closed.promise;
  clearTimeout(bound);
  t.same([reader.interim, reader.finals, reader.bodies.map(String)], [[100], [200], ["/upload"]], "100, then the app's 200");
  const activity = await collectAfterBarrier(daemon.port, upstream);
  const [request] = activity.requests;
  t.equal(Buffer.concat(request?.body ?? []).toString(), "hello world", "the body reached the app");
  t.notOk(request?.rawHeaders.some((name) => name.toLowerCase() === "expect"), "Expect is not forwarded");
});

t.test("an upgrade request with a body reaches the upstream with one Content-Length", async (t) => {
  const upstream = await startRecordingUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  // node:http's daemon forwarded the client's Content-Length and added one of its own: two lines
  // ("05" and "5" here), which a strict upstream refuses. The relay sends the client's alone.
  for (const [name, upgrade, length] of [["WebSocket", "websocket", "5"], ["h2c", "h2c", "05"]] as const) {
    const bytes = `POST /${name} HTTP/1.1\r\nHost: app.example\r\nConnection: Upgrade\r\nUpgrade: ${upgrade}\r\nContent-Length: ${length}\r\n\r\nhello`;
    const errorsBefore = upstream.parseErrors().length;
    const result = await exchange(daemon.port, { pieces: [Buffer.from(bytes, "latin1")], responses: 1, then: "half-close", timeoutMs: 2_000 });
    const activity = await collectAfterBarrier(daemon.port, upstream);
    const diagnostics = { sent: showBytes(bytes), upstreamGot: showBytes(activity.bytes) };
    t.equal(activity.bytes.match(/\r\ncontent-length:/gi)?.length, 1, `${name}: one Content-Length line`, diagnostics);
    t.same(upstream.parseErrors().slice(errorsBefore), [], `${name}: the upstream's parser takes the request`, diagnostics);
    t.not(result.finals[0], 502, `${name}: answered by the app`, { ...diagnostics, received: showBytes(result.received) });
  }
});
