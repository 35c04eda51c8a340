// A raw-socket hostile upstream: for each malformed, cut-short or smuggling-shaped answer the client gets a 502/504 or an abrupt close, never a hang; the daemon lives and the next request on the same pool is answered.
import { request } from "node:http";
import type { Socket } from "node:net";
import t, { type Test } from "tap";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { startRawUpstream } from "../helpers/raw-upstream.js";

/** What the hostile upstream does with a request whose path is `/<case>`; `/good` always gets a clean 200. */
const CASES: Record<string, { answer: (socket: Socket) => void; expect: "200" | "502" | "504" | "abrupt" | "status" }> = {
  "truncated-head": { answer: (s) => s.end("HTTP/1.1 200 OK\r\nContent-Le"), expect: "502" },
  "garbage-head": { answer: (s) => s.end("NONSENSE\r\n\r\n"), expect: "502" },
  "no-answer-then-close": { answer: (s) => s.end(), expect: "502" },
  "body-cut-short": { answer: (s) => s.end("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten.."), expect: "abrupt" },
  "chunked-cut-short": { answer: (s) => s.end("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"), expect: "abrupt" },
  "cl-and-te": { answer: (s) => s.write("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"), expect: "502" },
  "duplicate-cl": { answer: (s) => s.write("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!"), expect: "502" },
  "huge-headers": { answer: (s) => s.end(`HTTP/1.1 200 OK\r\nX-Big: ${"a".repeat(1024 * 1024)}\r\n\r\n`), expect: "502" },
  "bad-chunk-size": { answer: (s) => s.end("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n"), expect: "abrupt" },
  "304-with-body": { answer: (s) => s.write("HTTP/1.1 304 Not Modified\r\nContent-Length: 4\r\n\r\nbody"), expect: "status" },
  "204-with-body": { answer: (s) => s.write("HTTP/1.1 204 No Content\r\n\r\nstray bytes"), expect: "status" },
  "unsolicited-100": { answer: (s) => s.write("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"), expect: "200" },
  "silent": { answer: () => {}, expect: "504" },
};

function hostileUpstream(t: Test) {
  return startRawUpstream(t, (head, socket) => {
    const path = /^\w+ \/(\S*)/.exec(head)?.[1] ?? "";
    if (path === "good") socket.write("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ngood");
    else CASES[path]?.answer(socket);
  });
}

/** One request; resolves with the status and whether the body ended cleanly, or "abrupt" if the connection broke. */
function fetchOutcome(port: number, path: string): Promise<{ status: number; complete: boolean } | "abrupt"> {
  return new Promise((resolve) => {
    const req = request({ host: "127.0.0.1", port, path, agent: false }, (res) => {
      res.on("data", () => {});
      res.on("end", () => resolve({ status: res.statusCode ?? 0, complete: res.complete }));
      res.on("error", () => resolve("abrupt"));
      res.on("aborted", () => resolve("abrupt"));
    });
    req.on("error", () => resolve("abrupt"));
    req.end();
  });
}

t.test("each hostile answer: an error status or an abrupt end, never a hang; the next request is answered", async (t) => {
  const upstream = await hostileUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url, "--response-header-timeout", "300ms"]);
  for (const [name, { expect }] of Object.entries(CASES)) {
    const outcome = await fetchOutcome(daemon.port, `/${name}`);
    if (expect === "abrupt") t.equal(outcome, "abrupt", `${name}: the response ends abruptly, never looks complete`);
    else if (expect === "status") t.match(outcome, { status: Number(/^(\d+)/.exec(name)?.[1]), complete: true }, `${name}: passed as a bodiless answer`);
    else t.match(outcome, { status: Number(expect), complete: true }, `${name}: ${expect}`);
    t.match(await fetchOutcome(daemon.port, "/good"), { status: 200, complete: true }, `${name}: the next request on the pool is answered`);
  }
  t.match(await fetchOutcome(daemon.port, "/health"), { status: 200 }, "the daemon is alive");
});
