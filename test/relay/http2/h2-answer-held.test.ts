// An app's whole answer that arrives while the client's window holds it back: the stream at the app is complete, and the client still gets every byte and the clean end (it got RST_STREAM and a log of "upstream failed mid-response" when the stream's completion dropped what waited).
import http2 from "node:http2";
import t from "tap";
import { h2Connect, h2Request, startH2Upstream } from "../../helpers/h2.js";
import { startTestDaemon } from "../../helpers/in-process-daemon.js";

/** Within the app's first window (65,535), so it all arrives at once with END_STREAM; four times the client's window. */
const BODY = Buffer.alloc(60_000, "x");
const CLIENT_WINDOW = 15_000;

t.test("the answer waiting on the client's window when the app's stream completes reaches the client whole, with a clean end", async (t) => {
  const app = await startH2Upstream(t);
  app.handle((stream) => {
    stream.respond({ ":status": 200, "content-length": String(BODY.length) });
    stream.end(BODY);
  });
  const daemon = await startTestDaemon(t, ["--upstream", app.url]);
  const session = h2Connect(t, daemon.port, { settings: { initialWindowSize: CLIENT_WINDOW } });
  const answers = await Promise.all(Array.from({ length: 8 }, () => h2Request(session, { ":method": "GET", ":path": "/big" })));
  for (const [index, answer] of answers.entries()) {
    t.equal(answer.status, 200, `request ${index}: 200`);
    t.equal(answer.rstCode, http2.constants.NGHTTP2_NO_ERROR, `request ${index}: ended cleanly`);
    t.equal(answer.body.length, BODY.length, `request ${index}: every byte`);
  }
});
