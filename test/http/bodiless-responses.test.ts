// 204, 304 and HEAD answers have no body whatever their headers say (RFC 9110 §6.4.1): a Content-Length on them, or stray bytes after them, never cost the client the response.
import { createServer as createNetServer, type AddressInfo } from "node:net";
import t, { type Test } from "tap";
import { send } from "../helpers/http-client.js";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { startUpstream } from "../helpers/upstream.js";

t.test("a Node upstream's 304 with the representation's Content-Length reaches the client", async (t) => {
  const upstream = await startUpstream(t);
  upstream.handle((req, res) => {
    if (req.url === "/cached") {
      res.writeHead(304, { etag: '"v1"', "content-length": "1234" });
      res.end();
    } else res.end("next");
  });
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  const reply = await send(daemon.port, "/cached", { headers: { "if-none-match": '"v1"' } });
  t.equal(reply.status, 304);
  t.equal(reply.headers.etag, '"v1"');
  t.equal(reply.body.length, 0);
  t.equal((await send(daemon.port, "/next")).text(), "next", "the next request is answered");
  t.notOk(daemon.logs.records.some((record) => record.msg === "upstream failed mid-response"));
});

t.test("a 204 with Content-Length passes without the length it must not carry", async (t) => {
  const upstream = await startUpstream(t);
  upstream.handle((_req, res) => {
    res.writeHead(204, { "content-length": "10", "x-kept": "yes" });
    res.end();
  });
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  const reply = await send(daemon.port, "/none", { method: "DELETE" });
  t.equal(reply.status, 204);
  t.equal(reply.headers["x-kept"], "yes");
  t.equal(reply.headers["content-length"], undefined, "RFC 9110 §8.6: no Content-Length in a 204");
});

/** A raw upstream answering every request with `answer` and then `stray`, on one kept-alive connection. */
async function rawUpstream(t: Test, answer: string, stray: string) {
  const server = createNetServer((socket) => {
    socket.on("data", () => socket.write(answer + stray));
    socket.on("error", () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => server.close());
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

for (const [status, text] of [[204, "No Content"], [304, "Not Modified"]] as const) {
  t.test(`a ${status} followed by stray bytes still reaches the client, and the next request works`, async (t) => {
    const upstream = await rawUpstream(t, `HTTP/1.1 ${status} ${text}\r\nContent-Length: 5\r\nETag: "x"\r\n\r\n`, "hello");
    const daemon = await startTestDaemon(t, ["--upstream", upstream]);
    for (let round = 0; round < 3; round++) {
      const reply = await send(daemon.port, "/r");
      t.equal(reply.status, status, `round ${round}`);
      t.equal(reply.body.length, 0);
    }
  });
}

t.test("HEAD: the head passes with its Content-Length, no body", async (t) => {
  const upstream = await startUpstream(t);
  upstream.handle((_req, res) => {
    res.writeHead(200, { "content-length": "4" });
    res.end();
  });
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  const reply = await send(daemon.port, "/h", { method: "HEAD" });
  t.equal(reply.status, 200);
  t.equal(reply.headers["content-length"], "4");
});

t.test("an unsolicited 100 Continue is passed on as an interim answer, then the final one", async (t) => {
  const upstream = await rawUpstream(t, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", "");
  const daemon = await startTestDaemon(t, ["--upstream", upstream]);
  const reply = await send(daemon.port, "/x");
  t.equal(reply.status, 200, "RFC 9110 §15.2: a 1xx the client did not ask for is parsed and skipped, not an error");
  t.equal(reply.text(), "ok");
  t.equal((await send(daemon.port, "/health")).status, 200);
});
