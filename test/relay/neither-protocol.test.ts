// A connection whose first line, whole in its first read, is neither an HTTP/1.x request line nor the HTTP/2 preface is closed without an answer (RFC 9113 §3.4, h2spec 3.5/2); anything with an HTTP version keeps its 400.
import { connect } from "node:net";
import t from "tap";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { startUpstream } from "../helpers/upstream.js";

interface Ending {
  readonly answer: string;
  /** The connection ended with our FIN, not a reset: nothing the client sent was left unread. */
  readonly endedCleanly: boolean;
}

/** Sends `bytes` as the connection's first write; collects what comes back until the proxy ends the connection. */
function firstWrite(port: number, bytes: string): Promise<Ending> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let endedCleanly = false;
    const socket = connect(port, "127.0.0.1", () => socket.write(bytes, "latin1"));
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error("the proxy did not end the connection in 10 s"));
    }, 10_000);
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("end", () => {
      endedCleanly = true;
      socket.end();
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(timer);
      resolve({ answer: Buffer.concat(chunks).toString("latin1"), endedCleanly });
    });
  });
}

const SILENT: readonly { readonly name: string; readonly bytes: string }[] = [
  { name: "h2spec 3.5/2's invalid preface", bytes: "INVALID CONNECTION PREFACE\r\n\r\n" },
  { name: "a line of text", bytes: "hello\r\n" },
  { name: "binary bytes with a line end", bytes: "\x16\x03\x01\x02\x00\x01\x0a\x00\x01\xfc\x03\x03" },
];

const ANSWERED: readonly { readonly name: string; readonly bytes: string; readonly status: number }[] = [
  { name: "an unknown method on an HTTP/1.1 line", bytes: "FOO / HTTP/1.1\r\nHost: a\r\n\r\n", status: 400 },
  { name: "a bad header after a good line", bytes: "GET / HTTP/1.1\r\nHost: a\r\nBad Header\r\n\r\n", status: 400 },
  { name: "a space in the target", bytes: "GET /a b HTTP/1.1\r\nHost: a\r\n\r\n", status: 400 },
  { name: "a lower-case version", bytes: "GET / http/1.1\r\nHost: a\r\n\r\n", status: 400 },
  { name: "binary bytes with no line end (a TLS hello): nothing to judge by", bytes: "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", status: 400 },
  { name: "a line of text behind an answered request", bytes: "GET /health HTTP/1.1\r\nHost: a\r\n\r\nhello\r\n\r\n", status: 400 },
];

t.test("a whole first line with no HTTP version: the connection closes with no bytes written, and the app sees nothing", async (t) => {
  const upstream = await startUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  for (const one of SILENT) {
    const ending = await firstWrite(daemon.port, one.bytes);
    t.equal(ending.answer, "", `${one.name}: nothing written back`);
    t.ok(ending.endedCleanly, `${one.name}: ended with a FIN`);
  }
  t.equal(upstream.received.length, 0, "none reached the app");
});

t.test("a request line with an HTTP version keeps its 400, first or later on the connection", async (t) => {
  const upstream = await startUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  for (const one of ANSWERED) {
    const ending = await firstWrite(daemon.port, one.bytes);
    const statuses = [...ending.answer.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]));
    t.equal(statuses.at(-1), one.status, `${one.name}: answered ${one.status}`);
  }
  t.equal(upstream.received.length, 0, "none reached the app");
});
