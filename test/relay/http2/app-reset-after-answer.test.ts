// An h2c app that answers whole while the request body still comes, then resets its stream (it wants no more of the body): the client has its whole answer, whatever it speaks, and nothing is logged as failed mid-response.
import http2 from "node:http2";
import net from "node:net";
import t, { type Test } from "tap";
import { h2Connect, h2Request, startH2Upstream } from "../../helpers/h2.js";
import { startTestDaemon, type TestDaemon } from "../../helpers/in-process-daemon.js";

const ANSWER = "answered before the upload ended";

/** The app answers at the request's head, then resets with CANCEL (what many apps send, where RFC 9113 §8.1 asks for NO_ERROR). */
async function startAnswerThenCancelApp(t: Test): Promise<string> {
  const app = await startH2Upstream(t);
  app.handle((stream) => {
    stream.respond({ ":status": 200, "content-length": String(ANSWER.length) });
    stream.end(ANSWER, () => stream.close(http2.constants.NGHTTP2_CANCEL));
  });
  return app.url;
}

/**
 * Whether the proxy logged a failure for the reset: asked after a second request has been
 * answered on the same app connection, whose frames come after the first stream's RST_STREAM.
 */
async function loggedMidResponseFailure(t: Test, daemon: TestDaemon): Promise<boolean> {
  const after = await h2Request(h2Connect(t, daemon.port), { ":method": "GET", ":path": "/after" });
  t.equal(after.status, 200, "a later request on the same app connection is answered");
  return daemon.logs.records.some((record) => record.msg === "upstream failed mid-response");
}

t.test("an h2 client still uploading gets the whole answer; no mid-response failure is logged", async (t) => {
  const daemon = await startTestDaemon(t, ["--upstream", await startAnswerThenCancelApp(t), "--upstream-protocol", "h2c"]);
  const session = h2Connect(t, daemon.port);
  const stream = session.request({ ":method": "POST", ":path": "/upload" }, { endStream: false });
  stream.write(Buffer.alloc(1_000, "x"));
  const answer = await new Promise<{ status: number; body: string }>((resolve) => {
    let status = 0;
    const chunks: Buffer[] = [];
    stream.on("response", (headers) => (status = Number(headers[":status"])));
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("error", () => {});
    stream.on("end", () => resolve({ status, body: Buffer.concat(chunks).toString() }));
  });
  t.same(answer, { status: 200, body: ANSWER });
  t.notOk(await loggedMidResponseFailure(t, daemon), "nothing failed");
  stream.close();
});

t.test("an HTTP/1.1 client still uploading gets the whole answer; no mid-response failure is logged", async (t) => {
  const daemon = await startTestDaemon(t, ["--upstream", await startAnswerThenCancelApp(t), "--upstream-protocol", "h2c"]);
  const socket = net.connect(daemon.port, "127.0.0.1");
  t.teardown(() => socket.destroy());
  socket.write("POST /upload HTTP/1.1\r\nhost: x\r\ncontent-length: 100000\r\n\r\n" + "x".repeat(1_000));
  let received = "";
  await new Promise<void>((resolve) => {
    socket.on("data", (chunk: Buffer) => {
      received += chunk.toString("latin1");
      if (received.endsWith(ANSWER)) resolve();
    });
    socket.on("close", () => resolve());
  });
  t.match(received, /^HTTP\/1\.1 200 OK\r\n/);
  t.match(received, new RegExp(`content-length: ${ANSWER.length}\\r\\n[\\s\\S]*\\r\\n\\r\\n${ANSWER}$`, "i"));
  t.notOk(await loggedMidResponseFailure(t, daemon), "nothing failed");
});
