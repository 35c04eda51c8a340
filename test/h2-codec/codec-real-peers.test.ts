// The codec on both sides (bench/lib/codec-relay.ts) between real peers: curl's uploads and downloads through both windows, h2load's multiplexing, grpcio's unary calls and a server stream.
import { execFile, spawn, spawnSync } from "node:child_process";
import http2 from "node:http2";
import type { AddressInfo, Server } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import t, { type Test } from "tap";
import { startCodecRelay } from "../../bench/lib/codec-relay.js";
import { grpcioMissing, startGrpcApp, startGrpcClient, SYSTEM_PYTHON } from "../helpers/grpc-app.js";

const run = promisify(execFile);
const missing = (command: string) => (spawnSync("sh", ["-c", `command -v ${command}`]).status === 0 ? false : `needs ${command}`);

async function relayTo(t: Test, upstreamPort: number): Promise<number> {
  const relay: Server = await startCodecRelay(0, new URL(`http://127.0.0.1:${upstreamPort}`));
  t.teardown(() => new Promise<void>((resolve) => relay.close(() => resolve())));
  return (relay.address() as AddressInfo).port;
}

/** An h2c app (nghttp2 through node:http2): GET /bytes/N answers N octets; any other request is answered with the octets its body had. */
async function startApp(t: Test): Promise<number> {
  const app = http2.createServer();
  app.on("stream", (stream, headers) => {
    const path = String(headers[":path"]);
    let received = 0;
    stream.on("data", (chunk: Buffer) => (received += chunk.length));
    stream.on("end", () => {
      if (path.startsWith("/bytes/")) {
        stream.respond({ ":status": 200 });
        stream.end(Buffer.alloc(Number(path.slice(7)), 0x61));
      } else {
        stream.respond({ ":status": 200, "x-path": path });
        stream.end(`received ${received}\n`);
      }
    });
    stream.on("error", () => {});
  });
  await new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve));
  t.teardown(() => new Promise<void>((resolve) => app.close(() => resolve())));
  return (app.address() as AddressInfo).port;
}

t.test("curl: a 3 MiB upload and a 5 MiB download through both hops' windows, whole", { skip: missing("curl") }, async (t) => {
  const port = await relayTo(t, await startApp(t));
  const upload = spawn("curl", ["-s", "--http2-prior-knowledge", "-H", "content-type: application/octet-stream", "--data-binary", "@-", `http://127.0.0.1:${port}/upload`]);
  let answer = "";
  upload.stdout.on("data", (chunk: Buffer) => (answer += chunk.toString()));
  upload.stdin.end(Buffer.alloc(3 * 1024 * 1024, 0x62));
  await new Promise((resolve) => upload.once("exit", resolve));
  t.equal(answer, `received ${3 * 1024 * 1024}\n`);
  const { stdout } = await run("curl", ["-s", "--http2-prior-knowledge", "-o", "/dev/null", "-w", "%{http_code} %{size_download}", `http://127.0.0.1:${port}/bytes/${5 * 1024 * 1024}`]);
  t.equal(stdout, `200 ${5 * 1024 * 1024}`);
});

t.test("h2load: 3,000 requests on 10 connections × 10 streams, none failed", { skip: missing("h2load") }, async (t) => {
  const port = await relayTo(t, await startApp(t));
  const { stdout } = await run("h2load", ["-n", "3000", "-c", "10", "-m", "10", `http://127.0.0.1:${port}/small`], { timeout: 60_000 });
  t.match(stdout, /requests: 3000 total, 3000 started, 3000 done, 3000 succeeded, 0 failed, 0 errored, 0 timeout/);
});

t.test("grpcio: unary calls and a Watch stream through the codec on both sides", { skip: grpcioMissing() }, async (t) => {
  const app = await startGrpcApp(t);
  const port = await relayTo(t, app.port);
  const calls = spawn(SYSTEM_PYTHON, ["-u", join(import.meta.dirname, "../helpers/grpc-calls.py"), `127.0.0.1:${port}`, "100", "0"], { stdio: ["ignore", "pipe", "pipe"] });
  let said = "";
  calls.stdout.on("data", (chunk: Buffer) => (said += chunk.toString()));
  await new Promise((resolve) => calls.once("exit", resolve));
  t.match(said, /done ok=100 failed=0/, "100 unary calls answered");
  const watch = startGrpcClient(t, "watch", port, "");
  t.match(await watch.waitForLine(/^status /), /^status SERVING$/, "the stream's first message");
  const from = watch.lines.length;
  await app.set("", "NOT_SERVING");
  t.equal(await watch.waitForLine(/^status NOT_SERVING$/, from), "status NOT_SERVING", "a later message on the same stream");
});
