// Issue 37.4 and 37.5 against the binary: an h2c app that accepts and never sends SETTINGS gets its requests a 504 at the head deadline, and `Expect: 100-continue` toward an h2c app is answered as over HTTP/1.1.
import { existsSync } from "node:fs";
import { connect } from "node:net";
import t from "tap";
import { h2Connect, h2Request, startH2Upstream } from "../../helpers/h2.js";
import { send } from "../../helpers/http-client.js";
import { startSilentApp } from "../../helpers/silent-app.js";
import { BINARY, spawnDaemon } from "../../helpers/spawn-daemon.js";
import { within as withinOr } from "../../helpers/test-doubles.js";

/** The answer, or what did not come in time (the assertion then fails on that text). */
const within = <T>(promise: Promise<T>, ms: number, what: string) => withinOr(promise, ms, `${what}: nothing within ${ms} ms`);


const skip = existsSync(BINARY) ? false : "the binary is not built (make build)";

t.test("an h2c app that never sends SETTINGS: 504 at the head deadline for HTTP/1.1 and h2 clients alike", { skip }, async (t) => {
  const app = await startSilentApp(t);
  const daemon = await spawnDaemon(t, [BINARY], ["--upstream", app.url, "--upstream-protocol", "h2c", "--response-header-timeout", "1s"]);
  const overHttp1 = await within(send(daemon.port, "/slow"), 15_000, "HTTP/1.1");
  t.equal(typeof overHttp1 === "string" ? overHttp1 : overHttp1.status, 504, "HTTP/1.1 client: 504");
  const overH2 = await within(h2Request(h2Connect(t, daemon.port), { ":path": "/slow" }), 15_000, "h2");
  t.equal(typeof overH2 === "string" ? overH2 : overH2.status, 504, "h2 client: 504");
  const gone = await within(send(daemon.port, "/readyz"), 5_000, "readyz");
  t.equal(typeof gone === "string" ? gone : gone.status, 200, "the proxy serves on");
});

t.test("Expect: 100-continue toward an h2c app: 100 Continue, then the app's answer", { skip }, async (t) => {
  const app = await startH2Upstream(t);
  const daemon = await spawnDaemon(t, [BINARY], ["--upstream", app.url, "--upstream-protocol", "h2c"]);
  const socket = connect(daemon.port, "127.0.0.1");
  t.teardown(() => socket.destroy());
  let text = "";
  const waiting: Array<() => void> = [];
  // One reader of the socket; each wait checks what it has read so far, and again at every chunk.
  socket.on("data", (chunk: Buffer) => {
    text += chunk.toString("latin1");
    for (const check of [...waiting]) check();
  });
  const seen = (pattern: RegExp) =>
    within(
      new Promise<string>((resolve) => {
        const check = (): void => {
          if (!pattern.test(text)) return;
          waiting.splice(waiting.indexOf(check), 1);
          resolve(text);
        };
        waiting.push(check);
        check();
      }),
      10_000,
      String(pattern),
    );
  socket.write("POST /upload HTTP/1.1\r\nHost: proxy.test\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
  t.match(await seen(/^HTTP\/1\.1 100 Continue\r\n\r\n/), /^HTTP\/1\.1 100 Continue/, "100 Continue before the body");
  socket.write("hello");
  // The app's answer has no length: chunked to the HTTP/1.1 client.
  t.match(await seen(/\r\n0\r\n\r\n$/), /HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\n2\r\nok\r\n0\r\n\r\n$/, "then the app's answer");
  t.equal(app.received.at(-1)?.body.toString(), "hello", "the app got the body");
  t.equal(app.received.at(-1)?.headers.expect, undefined, "and no expect field");
});
