// A real gRPC app (python3-grpcio) behind the proxy, a real gRPC client in front: unary with trailers, status, every streaming shape, 3 MB, 200 concurrent calls, cancel, deadline.
import t from "tap";
import { grpcClient, grpcMissing, grpcStreamThroughDrain, startGrpcApp } from "../../helpers/grpc-peer.js";
import { startTestDaemon } from "../../helpers/in-process-daemon.js";

const missing = await grpcMissing();

t.test("gRPC end to end through --upstream-protocol auto", { skip: missing }, async (t) => {
  const appPort = await startGrpcApp(t);
  const daemon = await startTestDaemon(t, ["--upstream", `http://127.0.0.1:${appPort}`, "--access-log"]);
  const direct = await grpcClient(appPort, "unary");
  t.equal(direct.code, "OK", "the app answers directly");

  const unary = await grpcClient(daemon.port, "unary");
  t.equal(unary.code, "OK", "unary through the proxy");
  t.match(unary.response, { echo: "hello", xff: "127.0.0.1", deadline: true }, "X-Forwarded-For and grpc-timeout reach the app");
  t.match(unary.trailers, { "x-app-trailer": "yes" }, "the app's own trailer relayed");

  const status = await grpcClient(daemon.port, "status");
  t.match(status, { code: "INVALID_ARGUMENT", details: "bad thing: café", trailers: { "x-app-trailer": "failing" } }, "status, message and trailers relayed");

  t.same(await grpcClient(daemon.port, "server-stream"), { messages: ["message 0", "message 1", "message 2"], code: "OK" }, "server streaming: each message arrives before the next is made");
  t.same(await grpcClient(daemon.port, "client-stream"), { count: 3, bytes: 101010 }, "client streaming");
  t.same(await grpcClient(daemon.port, "bidi"), { messages: ["echo ping 0", "echo ping 1", "echo ping 2", "echo ping 3", "echo ping 4"] }, "bidi ping-pong");
  t.same(await grpcClient(daemon.port, "big"), { download: 3 * 1024 * 1024, upload: 3 * 1024 * 1024, reversed: true }, "3 MB each way");
  t.same(await grpcClient(daemon.port, "concurrent"), { ok: 200 }, "200 concurrent calls on one channel");

  const cancel = await grpcClient(daemon.port, "cancel");
  t.ok((cancel.cancelled as string[]).includes("cancel-me"), "the client's cancel reached the app");

  const deadline = await grpcClient(daemon.port, "deadline");
  t.equal(deadline.code, "DEADLINE_EXCEEDED");
  t.ok((deadline.seconds as number) < 5, "the deadline held through the proxy");

  const lines = daemon.logs.records.filter((record) => record.msg === "request");
  t.ok(lines.length > 200, "each stream is one access-log line");
  t.ok(lines.every((line) => line.protocol === "HTTP/2"), "protocol HTTP/2 on every line");
  t.ok(lines.some((line) => line.grpcStatus === 3), "grpcStatus from a trailers-only answer");
  t.ok(lines.some((line) => line.grpcStatus === 0), "grpcStatus from the trailers");
});

t.test("a gRPC stream in flight through the drain finishes; the connection gets GOAWAY after --shutdown-delay", { skip: missing }, async (t) => {
  const appPort = await startGrpcApp(t);
  const daemon = await startTestDaemon(t, ["--upstream", `http://127.0.0.1:${appPort}`, "--shutdown-delay", "200ms"]);
  let drained: Promise<void> | undefined;
  const result = await grpcStreamThroughDrain(daemon.port, appPort, async () => {
    drained = daemon.shutdown.run("SIGTERM");
    // Past the delay and the listener's grace: the client's connection has had its GOAWAY.
    await new Promise((resolve) => setTimeout(resolve, 1500));
  });
  t.same(result, { messages: ["message 0", "message 1", "message 2"], code: "OK" }, "every message after the drain began, then OK");
  await drained;
  t.notOk(daemon.logs.records.some((record) => record.msg === "shutdown timeout reached; closing remaining connections"), "finished within the shutdown timeout");
});
