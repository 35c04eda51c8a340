// `--upstream-protocol auto` in front of an HTTP/1.1-only app (python's http.server, a node one), on the binary: h2 clients are served over HTTP/1.1, gRPC gets UNAVAILABLE naming HTTP/1.1, and `h2c` forced says what is wrong.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import t, { type Test } from "tap";
import { curlH2, curlH2Missing } from "../helpers/curl-h2.js";
import { h2Connect, h2Request } from "../helpers/h2.js";
import { BINARY, spawnDaemon } from "../helpers/spawn-daemon.js";

const curlMissing = await curlH2Missing();
const skip = curlMissing || (!existsSync(BINARY) && "dist/readiness-proxy is not built: run make build");

/** `python3 -m http.server 0`, its port read from its own "Serving HTTP on ... port N" line. */
async function startPythonApp(t: Test): Promise<number> {
  const child = spawn("python3", ["-u", "-m", "http.server", "0", "--bind", "127.0.0.1"], { stdio: ["ignore", "pipe", "ignore"], cwd: import.meta.dirname });
  t.teardown(() => child.kill("SIGKILL"));
  // Read with a listener, never by leaving a `for await` loop: that destroys the pipe, and python's
  // unbuffered print writes the line's "\n" on its own, so a line split across two reads made python die
  // of the broken pipe (BrokenPipeError closes the server): the proxy's next connect was refused.
  let out = "";
  return new Promise((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      out += String(chunk);
      const port = /port (\d+) /.exec(out)?.[1];
      if (port !== undefined) resolve(Number(port));
    });
    child.once("exit", () => reject(new Error(`python3 -m http.server did not start: ${out}`)));
  });
}

/** A node:http app answering `node <url>` to every request. */
async function startNodeApp(t: Test): Promise<number> {
  const server = createServer((req, res) => res.end(`node ${req.url}`));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  t.teardown(() => server.close());
  return (server.address() as AddressInfo).port;
}

t.test("auto, python's http.server: curl --http2-prior-knowledge is served, the first request included", { skip }, async (t) => {
  const appPort = await startPythonApp(t);
  const daemon = await spawnDaemon(t, [BINARY], ["--upstream", `http://127.0.0.1:${appPort}`]);
  for (const round of [1, 2]) {
    const answer = await curlH2(daemon.port, "/");
    t.equal(answer.version, "HTTP/2", `round ${round}: h2 to the client`);
    t.equal(answer.status, 200, `round ${round}: the app's directory listing`);
    t.match(answer.body, /Directory listing/, `round ${round}: the app's own body`);
  }
  t.notOk(daemon.records.some((record) => record.msg === "upstream unavailable" || /FRAME_SIZE/.test(JSON.stringify(record))), "no 502, no frame-size error logged");
});

t.test("auto, a node HTTP/1.1 app: h2 requests with bodies go as HTTP/1.1; gRPC gets grpc-status 14 naming HTTP/1.1", { skip }, async (t) => {
  const appPort = await startNodeApp(t);
  const daemon = await spawnDaemon(t, [BINARY], ["--upstream", `http://127.0.0.1:${appPort}`]);
  const session = h2Connect(t, daemon.port);
  // Several at once, before anything is known: every one waits for the one preface, none is lost.
  const answers = await Promise.all([1, 2, 3].map((n) => h2Request(session, { ":path": `/n${n}`, ":method": "POST" }, `body ${n}`)));
  t.same(answers.map((answer) => [answer.status, answer.body.toString()]), [[200, "node /n1"], [200, "node /n2"], [200, "node /n3"]]);
  const grpc = await h2Request(session, { ":path": "/test.Echo/Say", ":method": "POST", "content-type": "application/grpc", te: "trailers" }, Buffer.alloc(5));
  t.equal(grpc.status, 200);
  const grpcStatus = grpc.trailers?.["grpc-status"] ?? grpc.headers["grpc-status"];
  const grpcMessage = grpc.trailers?.["grpc-message"] ?? grpc.headers["grpc-message"];
  t.equal(grpcStatus, "14", "UNAVAILABLE");
  t.equal(decodeURIComponent(String(grpcMessage)), "upstream speaks HTTP/1.1");
});

t.test("h2c forced in front of an HTTP/1.1 app: 502, and the log line says it speaks HTTP/1.1 and names --upstream-protocol http1", { skip }, async (t) => {
  const appPort = await startNodeApp(t);
  const daemon = await spawnDaemon(t, [BINARY], ["--upstream", `http://127.0.0.1:${appPort}`, "--upstream-protocol", "h2c"]);
  const answer = await curlH2(daemon.port, "/");
  t.equal(answer.status, 502);
  const line = JSON.stringify(daemon.records.filter((record) => record.level === 50 || record.level === 40));
  t.match(line, /speaks HTTP\/1\.1 only, not h2c/, "what is wrong");
  t.match(line, /--upstream-protocol http1/, "what to use");
  t.notMatch(line, /FRAME_SIZE_ERROR/, "never the frame-size error");
});
