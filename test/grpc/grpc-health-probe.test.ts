// The gRPC upstream check against a real grpcio app: each serving status, NOT_FOUND, UNIMPLEMENTED, a hung app, a refused and a failed connection, one connection reused and made again when it breaks.
import { createServer as createHttpServer } from "node:http";
import { createServer, connect, type AddressInfo, type Socket } from "node:net";
import t, { type Test } from "tap";
import { GrpcHealthProbe } from "../../src/readiness/grpc-health-probe.js";
import { grpcioMissing, startGrpcApp } from "../helpers/grpc-app.js";
import { closedPort } from "../helpers/test-doubles.js";

const missing = grpcioMissing();
if (missing) t.comment(`skipping the grpcio cases: ${missing}`);

function probeOf(t: Test, port: number, service: string, timeoutMs = 1000): GrpcHealthProbe {
  const probe = new GrpcHealthProbe({ endpoint: { kind: "tcp", host: "127.0.0.1", port, authority: `127.0.0.1:${port}` }, service, timeoutMs });
  t.teardown(() => probe.close());
  return probe;
}

t.test("each answer of the app's health service, and the reason it gives", { skip: missing }, async (t) => {
  const app = await startGrpcApp(t);
  const whole = probeOf(t, app.port, "");
  t.same(await whole.probe(), { ok: true, status: 200 }, "SERVING passes");
  await app.waitForCall(/^user-agent readiness-proxy\//);
  t.equal(app.calls[0], "check ", 'the app was asked for "", by readiness-proxy/<version>');
  const named = probeOf(t, app.port, "my.Service");
  const cases: ReadonlyArray<readonly [Parameters<typeof app.set>[1], string]> = [
    ["NOT_SERVING", "status NOT_SERVING"],
    ["UNKNOWN", "status UNKNOWN"],
    ["SERVICE_UNKNOWN", "status SERVICE_UNKNOWN"],
    ["NOTFOUND", "status SERVICE_UNKNOWN"],
    ["UNIMPLEMENTED", "grpc status 12"],
  ];
  for (const [mode, reason] of cases) {
    await app.set("my.Service", mode);
    t.match(await named.probe(), { ok: false, reason }, `${mode}: ${reason}`);
  }
  await app.set("my.Service", "SERVING");
  t.same(await named.probe(), { ok: true, status: 200 }, "and passing again");
  await app.waitForCall("check my.Service");
  t.pass("the service name reached the app as given");
});

t.test("a hung app: timeout after the probe's timeout, and the next probe starts afresh", { skip: missing }, async (t) => {
  const app = await startGrpcApp(t);
  await app.set("", "HANG");
  const probe = probeOf(t, app.port, "", 300);
  const started = performance.now();
  t.match(await probe.probe(), { ok: false, reason: "timeout after 300ms" });
  const elapsed = performance.now() - started;
  // Loosely bounded: a wedge would wait for the app forever; a loaded machine adds its own delay.
  t.ok(elapsed < 2000, `settled in ${elapsed.toFixed(0)} ms, not held by the hung app`);
  await app.set("", "SERVING");
  t.same(await probe.probe(), { ok: true, status: 200 });
});

t.test("connection refused, and an HTTP/1.1-only server: connection failed", async (t) => {
  t.match(await probeOf(t, await closedPort(), "").probe(), { ok: false, reason: "connection refused", err: /ECONNREFUSED/ });
  const http1 = createHttpServer((_request, response) => response.end("not grpc"));
  await new Promise<void>((resolve) => http1.listen(0, "127.0.0.1", resolve));
  t.teardown(() => new Promise<void>((resolve) => http1.close(() => resolve())));
  t.match(await probeOf(t, (http1.address() as AddressInfo).port, "").probe(), { ok: false, reason: "connection failed" });
});

t.test("a server that accepts and says nothing: timeout; one that closes at once: connection failed", async (t) => {
  const sockets = new Set<Socket>();
  const silent = createServer((socket) => sockets.add(socket));
  const closing = createServer((socket) => socket.destroy());
  for (const server of [silent, closing]) await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
    silent.close();
    closing.close();
  });
  t.match(await probeOf(t, (silent.address() as AddressInfo).port, "", 200).probe(), { ok: false, reason: "timeout after 200ms" });
  t.match(await probeOf(t, (closing.address() as AddressInfo).port, "").probe(), { ok: false, reason: "connection failed" });
});

t.test("one connection for many probes; a broken one is made again", { skip: missing }, async (t) => {
  const app = await startGrpcApp(t);
  // A counting relay in front of the app: each connection the probe opens passes through it.
  const relayed = new Set<Socket>();
  let connections = 0;
  const relay = createServer((client) => {
    connections++;
    relayed.add(client);
    const upstream = connect(app.port, "127.0.0.1");
    client.pipe(upstream).pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
      relayed.delete(client);
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  });
  await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
  t.teardown(() => relay.close());
  const probe = probeOf(t, (relay.address() as AddressInfo).port, "");
  for (let round = 0; round < 10; round++) t.same(await probe.probe(), { ok: true, status: 200 });
  t.equal(connections, 1, "ten probes, one connection");
  for (const socket of relayed) socket.destroy();
  await new Promise((resolve) => setImmediate(resolve));
  const afterBreak = await probe.probe();
  // The first probe after the break may meet the dead session before its close is seen.
  if (!afterBreak.ok) t.match(afterBreak, { reason: "connection failed" });
  t.same(await probe.probe(), { ok: true, status: 200 }, "passing again on a new connection");
  t.equal(connections, 2);
});
