// Proxy-made 502, 503 (overloaded) and 504 for gRPC calls over HTTP/1.1: a 200 head with grpc-status 14 and the envelope's message, no body; other requests keep §6's envelope.
import t, { type Test } from "tap";
import { grpcErrorHeaders, wantsGrpcError } from "../../src/http/error-response.js";
import { startGatedUpstream } from "../helpers/gated-upstream.js";
import { send, type Reply } from "../helpers/http-client.js";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { closedPort } from "../helpers/test-doubles.js";

const grpcCall = { method: "POST", headers: { "content-type": "application/grpc", te: "trailers" }, body: Buffer.from([0, 0, 0, 0, 0]) };

function assertGrpcUnavailable(t: Test, reply: Reply, message: string): void {
  t.equal(reply.status, 200, "gRPC's errors ride on a 200");
  t.equal(reply.headers["content-type"], "application/grpc");
  t.equal(reply.headers["grpc-status"], "14", "UNAVAILABLE");
  t.equal(reply.headers["grpc-message"], message);
  t.equal(reply.headers["content-length"], "0");
  t.equal(reply.body.length, 0, "no body: trailers-only in HTTP/1.1's terms");
  t.match(reply.headers["x-request-id"], /.+/);
}

t.test("which requests get the gRPC form", async (t) => {
  const view = (contentType: string | undefined) => ({ method: "POST", url: "/x", header: (name: string) => (name === "content-type" ? contentType : undefined), joined: (name: string) => (name === "content-type" ? contentType : undefined) });
  for (const status of [502, 503, 504]) t.ok(wantsGrpcError(view("application/grpc+proto"), status), String(status));
  t.notOk(wantsGrpcError(view("application/grpc"), 400), "the client's own errors keep their form");
  t.ok(wantsGrpcError(view("application/grpc-web+proto"), 502), "application/grpc*: grpc-web clients read a trailers-only head");
  t.notOk(wantsGrpcError(view("application/json"), 502));
  t.same(grpcErrorHeaders(502, "r1", "100% gone"), ["content-type", "application/grpc", "grpc-status", "14", "grpc-message", "100%25 gone", "content-length", "0", "x-request-id", "r1"]);
});

t.test("a dead app: 502 becomes grpc-status 14, upstream unavailable; a JSON client still gets the envelope", async (t) => {
  const daemon = await startTestDaemon(t, ["--upstream", `http://127.0.0.1:${await closedPort()}`]);
  assertGrpcUnavailable(t, await send(daemon.port, "/test.Echo/Say", grpcCall), "upstream unavailable");
  const json = await send(daemon.port, "/test.Echo/Say", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
  t.equal(json.status, 502);
  t.match(json.json(), { error: { code: 502, message: "upstream unavailable" } });
});

t.test("no head in time: 504 becomes grpc-status 14, upstream timeout", async (t) => {
  const upstream = await startGatedUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url, "--response-header-timeout", "200ms"]);
  const reply = send(daemon.port, "/test.Echo/Say", grpcCall);
  const [held] = await upstream.arrivals(1);
  t.teardown(() => held!.release());
  assertGrpcUnavailable(t, await reply, "upstream timeout");
});

t.test("overloaded: the limiter's 503 becomes grpc-status 14, overloaded", async (t) => {
  const upstream = await startGatedUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url, "--max-concurrency", "1", "--max-queue", "0"]);
  const first = send(daemon.port, "/test.Echo/Say", grpcCall);
  const [held] = await upstream.arrivals(1);
  const refused = await send(daemon.port, "/test.Echo/Say", grpcCall);
  assertGrpcUnavailable(t, refused, "overloaded");
  held!.release();
  t.equal((await first).status, 200);
});

t.test("the access log and metrics count the proxy's status, not the 200 that carries gRPC's form, as over h2", async (t) => {
  const daemon = await startTestDaemon(t, ["--upstream", `http://127.0.0.1:${await closedPort()}`, "--access-log", "--log-level", "info"]);
  assertGrpcUnavailable(t, await send(daemon.port, "/test.Echo/Dead", grpcCall), "upstream unavailable");
  const upstream = await startGatedUpstream(t);
  const limited = await startTestDaemon(t, ["--upstream", upstream.url, "--access-log", "--log-level", "info", "--max-concurrency", "1", "--max-queue", "0"]);
  const first = send(limited.port, "/test.Echo/Held", grpcCall);
  const [held] = await upstream.arrivals(1);
  assertGrpcUnavailable(t, await send(limited.port, "/test.Echo/Refused", grpcCall), "overloaded");
  held!.release();
  await first;
  const lineOf = (records: { msg: string; path?: unknown }[], path: string) => records.find((record) => record.msg === "request" && record.path === path);
  t.match(lineOf(daemon.logs.records, "/test.Echo/Dead"), { status: 502, grpcStatus: 14, protocol: "HTTP/1.1" }, "a dead app: 502 and grpc-status 14 in the line");
  t.match(lineOf(limited.logs.records, "/test.Echo/Refused"), { status: 503, grpcStatus: 14 }, "overloaded: 503 and grpc-status 14");
});
