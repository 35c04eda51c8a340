// Pipelined requests on one connection: answered in order, one at a time to the app, each with its own keep-alive verdict.
import { connect } from "node:net";
import t from "tap";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { startUpstream } from "../helpers/upstream.js";

/** Writes `bytes` in one write and returns everything the daemon sends until it closes the connection. */
function exchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(bytes));
    let text = "";
    socket.on("data", (chunk: Buffer) => (text += chunk.toString("latin1")));
    socket.on("error", reject);
    socket.on("close", () => resolve(text));
  });
}

t.test("three pipelined requests: in order, the app sees one at a time, the last one's Connection: close ends it", async (t) => {
  const upstream = await startUpstream(t);
  let inApp = 0;
  let mostInApp = 0;
  upstream.handleRaw((req, res) => {
    inApp++;
    mostInApp = Math.max(mostInApp, inApp);
    req.resume();
    req.on("end", () =>
      // The first answer waits a turn of the event loop, so a relay that ran two at once would show it.
      setImmediate(() => {
        inApp--;
        res.end(`answer to ${req.url}`);
      }),
    );
  });
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  const text = await exchange(
    daemon.port,
    "GET /one HTTP/1.1\r\nHost: a\r\n\r\n" +
      "POST /two HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc" +
      "GET /three HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
  );
  const answers = [...text.matchAll(/HTTP\/1\.1 200 OK\r\nconnection: (\S+)\r\n[\s\S]*?\r\n\r\nanswer to (\/[a-z]+)/g)].map((match) => `${match[2]} ${match[1]}`);
  t.same(answers, ["/one keep-alive", "/two keep-alive", "/three close"], "each answer in order, keep-alive decided per request");
  t.equal(mostInApp, 1, "one request at a time to the app");
});

t.test("an HTTP/1.1 request without Host is a 400, as node:http answers it, and never reaches the app", async (t) => {
  const upstream = await startUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  const text = await exchange(daemon.port, "GET /no-host HTTP/1.1\r\n\r\n");
  t.match(text, /^HTTP\/1\.1 400 Bad Request\r\nconnection: close\r\n/);
  t.equal(upstream.received.length, 0);
});
