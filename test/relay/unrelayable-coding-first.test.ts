// A transfer coding the relay cannot pass on (anything but plain chunked) is refused with its 501 and the close before anything else about the request is judged: neither a 417 nor a health answer keeps such a connection open for what follows (found by the request fuzz, seed 136389000).
import { connect } from "node:net";
import t from "tap";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { startUpstream } from "../helpers/upstream.js";
import { ResponseReader } from "./raw-exchange.js";

/** Writes `bytes` in one write; resolves with the final statuses once the proxy closes the connection. */
function exchange(port: number, bytes: string): Promise<readonly number[]> {
  const reader = new ResponseReader(() => false);
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(bytes));
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the connection stayed open after ${JSON.stringify(reader.finals)}`));
    }, 5_000);
    socket.on("data", (chunk: Buffer) => reader.push(chunk));
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(reader.finals);
    });
  });
}

const BEHIND = "GET /behind HTTP/1.1\r\nHost: app.example\r\n\r\n";
const CASES = [
  { name: "an unmet expectation", head: "GET / HTTP/1.1\r\nHost: app.example\r\nExpect: foo\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n" },
  { name: "the liveness path", head: "GET /health HTTP/1.1\r\nHost: app.example\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n" },
  { name: "the readiness path", head: "GET /readyz HTTP/1.1\r\nHost: app.example\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n" },
  // The request fuzz, seed 1561161404: answered 200 as the server's OPTIONS, the connection kept.
  { name: "OPTIONS *", head: "OPTIONS * HTTP/1.1\r\nHost: app.example\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n" },
];

for (const { name, head } of CASES) {
  t.test(`${name} with Transfer-Encoding: gzip, chunked: 501, the close, and nothing behind it served`, async (t) => {
    const upstream = await startUpstream(t);
    const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
    const finals = await exchange(daemon.port, head + BEHIND);
    t.same(finals, [501]);
    t.same(upstream.received.map((request) => request.url), []);
  });
}

// The same rule where the app speaks h2c (its own exchange plans the request): nothing reaches the app, so none is started.
for (const head of [CASES[3]!.head, "GET / HTTP/1.1\r\nHost: app.example\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n"]) {
  t.test(`to an h2c app, ${JSON.stringify(head.split("\r\n", 1)[0])} with Transfer-Encoding: gzip, chunked: 501 and the close`, async (t) => {
    const daemon = await startTestDaemon(t, ["--upstream", "http://127.0.0.1:9", "--upstream-protocol", "h2c"]);
    t.same(await exchange(daemon.port, head + BEHIND), [501]);
  });
}
