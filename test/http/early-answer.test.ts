// An app that answers before reading the whole upload (413, 401, an early 200): the client gets the answer, can finish sending, and its keep-alive connection still works.
import { spawn, spawnSync } from "node:child_process";
import { connect } from "node:net";
import t from "tap";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { startUpstream } from "../helpers/upstream.js";

const UPLOAD_BYTES = 16 * 1024 * 1024; // well past every socket buffer on the way
const hasCurl = spawnSync("curl", ["--version"]).status === 0;

/**
 * One keep-alive connection, raw: a chunked PUT of UPLOAD_BYTES written to the end (every
 * write callback called, so the proxy read it all), then a GET on the same connection.
 * Resolves with everything the proxy sent back.
 */
function uploadThenReuse(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let received = "";
    socket.on("data", (chunk: Buffer) => {
      received += chunk.toString("latin1");
      if (/HTTP\/1\.1 \d{3}[\s\S]*HTTP\/1\.1 200[\s\S]*\r\n\r\nsecond$/.test(received)) {
        socket.end();
        resolve(received);
      }
    });
    socket.on("error", reject);
    socket.write("PUT /upload HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n");
    const chunk = Buffer.concat([Buffer.from("10000\r\n"), Buffer.alloc(0x10000, 0x75), Buffer.from("\r\n")]);
    let sent = 0;
    const pump = () => {
      while (sent < UPLOAD_BYTES) {
        sent += 0x10000;
        if (!socket.write(chunk)) return void socket.once("drain", pump);
      }
      socket.write("0\r\n\r\nGET /second HTTP/1.1\r\nHost: a\r\n\r\n");
    };
    pump();
  });
}

for (const status of [413, 200, 204]) {
  t.test(`the app answers ${status} at once: the upload is read to its end and the connection is reused`, async (t) => {
    const upstream = await startUpstream(t);
    upstream.handleRaw((req, res) => {
      if (req.url === "/second") return void res.end("second");
      res.writeHead(status, status === 204 ? {} : { "content-length": "5" });
      res.end(status === 204 ? undefined : "early");
    });
    const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
    const received = await uploadThenReuse(daemon.port);
    t.match(received, new RegExp(`^HTTP/1\\.1 ${status} `), "the early answer first");
    if (status !== 204) t.match(received, /\r\n\r\nearly/);
    t.match(received, /HTTP\/1\.1 200 OK[\s\S]*\r\n\r\nsecond$/, "then the next request on the same connection");
  });
}

t.test("curl's chunked upload (Expect: 100-continue) to an app that answers at once completes", { skip: !hasCurl && "curl is not installed" }, async (t) => {
  const upstream = await startUpstream(t);
  upstream.handleRaw((_req, res) => res.end("early"));
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  const curl = spawn("sh", ["-c", `head -c ${UPLOAD_BYTES} /dev/zero | curl -s --max-time 20 -T - http://127.0.0.1:${daemon.port}/upload`]);
  let output = "";
  curl.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise((resolve) => curl.on("close", resolve));
  t.equal(code, 0, "curl exits 0: its upload went through");
  t.equal(output, "early");
});
