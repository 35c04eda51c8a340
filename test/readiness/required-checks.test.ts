// --readiness-required-http and --readiness-required-grpc through a real daemon and real peers: 503 and back, verbose, /readyz/<name>, gRPC health names, metrics, one run per TTL for 1,000 callers, a hung endpoint's bounded answer, usage errors.
import { join } from "node:path";
import { Agent, request } from "node:http";
import t from "tap";
import { parseCommandLine } from "../../src/cli.js";
import { LOG_MESSAGES } from "../../src/readiness/transitions.js";
import { grpcioMissing, startGrpcApp, startGrpcClient } from "../helpers/grpc-app.js";
import { send } from "../helpers/http-client.js";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { scrapeText, seriesValue } from "../helpers/scrape.js";
import { ManualTimers } from "../helpers/test-doubles.js";
import { startUpstream } from "../helpers/upstream.js";

const fixtures = join(import.meta.dirname, "../../proc-fixtures");
const grpcMissing = grpcioMissing();

function run(argv: string[], env: NodeJS.ProcessEnv = {}) {
  let err = "";
  const result = parseCommandLine(argv, env, { writeOut: () => {}, writeErr: (text) => (err += text) });
  return { result, err: err.trimEnd() };
}

t.test("usage: each bad value is one line naming the flag or variable and the value, exit 2", async (t) => {
  const nine = Array.from({ length: 9 }, (_, index) => `c${index}=http://127.0.0.1:1/`);
  for (const [argv, env, line] of [
    [["--readiness-required-http", "mesh"], {}, 'error: --readiness-required-http: expected <name>=<http URL>, got "mesh"'],
    [["--readiness-required-http", "Mesh=http://127.0.0.1:15021/"], {}, 'error: --readiness-required-http: expected a check name of lowercase letters, digits and -, got "Mesh=http://127.0.0.1:15021/"'],
    [["--readiness-required-http", "upstream=http://127.0.0.1:15021/"], {}, 'error: --readiness-required-http: expected a name that is not a built-in check\'s, got "upstream=http://127.0.0.1:15021/"'],
    [["--readiness-required-http", "listener-80=http://127.0.0.1:15021/"], {}, 'error: --readiness-required-http: expected a name that is not a built-in check\'s, got "listener-80=http://127.0.0.1:15021/"'],
    [["--readiness-required-http", "shutdown=http://x/"], {}, 'error: --readiness-required-http: expected a name that is not a built-in check\'s, got "shutdown=http://x/"'],
    [["--readiness-required-http", "mesh=https://127.0.0.1:15021/"], {}, 'error: --readiness-required-http: expected <name>=<absolute http:// URL>, got "mesh=https://127.0.0.1:15021/"'],
    [["--readiness-required-http", "mesh=/healthz/ready"], {}, 'error: --readiness-required-http: expected <name>=<absolute http:// URL>, got "mesh=/healthz/ready"'],
    [["--readiness-required-http", "a=http://x/", "--readiness-required-http", "a=http://y/"], {}, 'error: --readiness-required-http: expected each check name once, got "a twice"'],
    [nine.flatMap((value) => ["--readiness-required-http", value]), {}, 'error: --readiness-required-http: expected at most 8 checks, got "9 checks"'],
    [[], { READINESS_PROXY_REQUIRED_HTTP: nine.join(",") }, 'error: READINESS_PROXY_REQUIRED_HTTP: expected at most 8 checks, got "9 checks"'],
    [["--readiness-required-grpc", "db=127.0.0.1"], {}, 'error: --readiness-required-grpc: expected <name>=<host:port>[/<service>], got "db=127.0.0.1"'],
    [["--readiness-required-grpc", "db=127.0.0.1:70000"], {}, 'error: --readiness-required-grpc: expected <name>=<host:port>[/<service>], got "db=127.0.0.1:70000"'],
    [["--readiness-required-grpc", "readyz=127.0.0.1:50051"], {}, 'error: --readiness-required-grpc: expected a name that is not a built-in check\'s, got "readyz=127.0.0.1:50051"'],
    [[], { READINESS_PROXY_REQUIRED_GRPC: "db=127.0.0.1:1,db=127.0.0.1:2" }, 'error: READINESS_PROXY_REQUIRED_GRPC: expected each check name once, got "db twice"'],
    [["--readiness-required-http", "db=http://x/", "--readiness-required-grpc", "db=127.0.0.1:1"], {}, 'error: --readiness-required-grpc: expected a name not used by --readiness-required-http, got "db"'],
  ] as const) {
    const { result, err } = run([...argv], env);
    t.same(result, { action: "exit", exitCode: 2 }, line);
    t.equal(err, line);
  }
  const { result } = run(["--readiness-required-http", "mesh=http://127.0.0.1:15021/healthz/ready?full=1", "--readiness-required-grpc=db=[::1]:50051/my.Db"], {
    READINESS_PROXY_REQUIRED_GRPC: "ignored=127.0.0.1:1",
  });
  t.match(result, {
    action: "run",
    config: { requiredHttpChecks: [{ name: "mesh", url: "http://127.0.0.1:15021/healthz/ready?full=1" }], requiredGrpcChecks: [{ name: "db", address: "[::1]:50051", endpoint: { kind: "tcp", host: "::1", port: 50051, authority: "[::1]:50051" }, service: "my.Db" }] },
  }, "the flag wins over its variable");
  t.match(run([], { READINESS_PROXY_REQUIRED_GRPC: "a=127.0.0.1:1, b=localhost:2/x" }).result, {
    config: { requiredGrpcChecks: [{ name: "a", address: "127.0.0.1:1", service: "" }, { name: "b", address: "localhost:2", service: "x" }] },
  }, "the variable's comma list");
});

t.test("an HTTP and a gRPC check turn 503 and back with real peers: verbose, /readyz/<name>, gRPC health names, metrics, one line per transition", { skip: grpcMissing }, async (t) => {
  const mesh = await startUpstream(t);
  let meshStatus = 200;
  mesh.handle((_req, res) => {
    res.statusCode = meshStatus;
    res.end();
  });
  const db = await startGrpcApp(t);
  await db.set("my.Db", "SERVING");
  const daemon = await startTestDaemon(t, [
    "--proc-root", join(fixtures, "listen-tcp-only"),
    "--readiness-required-listener", "8000",
    "--readiness-required-http", `mesh=${mesh.url}/healthz/ready`,
    "--readiness-required-grpc", `db=127.0.0.1:${db.port}/my.Db`,
    "--readiness-cache-ttl", "0s",
    "--metrics-listen", "127.0.0.1:0",
  ]);
  const verbose = async () => (await send(daemon.port, "/readyz?verbose")).text();
  t.equal(await verbose(), "[+]listener-8000 ok\n[+]mesh ok\n[+]db ok\n[+]shutdown ok\nreadyz check passed\n");
  meshStatus = 503;
  await db.set("my.Db", "NOT_SERVING");
  t.equal(await verbose(), "[+]listener-8000 ok\n[-]mesh failed: status 503\n[-]db failed: status NOT_SERVING\n[+]shutdown ok\nreadyz check failed\n");
  const body = (await send(daemon.port, "/readyz")).json();
  t.same(body, { status: "not ready", failedChecks: ["mesh", "db"] });
  t.equal((await send(daemon.port, "/readyz/mesh")).text(), "mesh failed: status 503\n");
  t.equal((await send(daemon.port, "/readyz/db")).text(), "db failed: status NOT_SERVING\n");
  t.equal((await startGrpcClient(t, "check", daemon.port, "mesh").waitForLine(/./)), "status NOT_SERVING", "the gRPC health service knows the name");
  const metrics = await scrapeText(daemon.metricsPort!);
  t.equal(seriesValue(metrics, 'readiness_proxy_check_ok{check="mesh"}'), 0);
  t.equal(seriesValue(metrics, 'readiness_proxy_check_ok{check="db"}'), 0);
  meshStatus = 204;
  await db.set("my.Db", "SERVING");
  const ready = await send(daemon.port, "/readyz/mesh");
  t.same([ready.status, ready.text()], [200, "ok"]);
  t.equal((await send(daemon.port, "/readyz")).status, 200, "ready again");
  t.equal((await startGrpcClient(t, "check", daemon.port, "db").waitForLine(/./)), "status SERVING");
  t.equal(seriesValue(await scrapeText(daemon.metricsPort!), 'readiness_proxy_check_ok{check="mesh"}'), 1);
  const transitions = daemon.logs.records.filter((record) => record.msg === LOG_MESSAGES.checkFailing || record.msg === LOG_MESSAGES.checkPassing);
  t.match(transitions, [
    { msg: LOG_MESSAGES.checkPassing, check: "mesh", url: `${mesh.url}/healthz/ready` },
    { msg: LOG_MESSAGES.checkPassing, check: "db", address: `127.0.0.1:${db.port}`, service: "my.Db" },
    { level: 40, msg: LOG_MESSAGES.checkFailing, check: "mesh", reason: "status 503", status: 503 },
    // The same reason as ?verbose and /readyz/db say (issue 41: one reason everywhere).
    { level: 40, msg: LOG_MESSAGES.checkFailing, check: "db", reason: "status NOT_SERVING" },
    { msg: LOG_MESSAGES.checkPassing, check: "mesh" },
    { msg: LOG_MESSAGES.checkPassing, check: "db" },
  ]);
  t.equal(transitions.length, 6, "once per transition, not per probe");
  t.match(daemon.logs.records.find((record) => record.msg === "listening"), { probedChecks: ["mesh", "db"] });
});

t.test("1,000 concurrent /readyz callers: one run of every check per TTL (counted at the peers)", { skip: grpcMissing }, async (t) => {
  const mesh = await startUpstream(t);
  const db = await startGrpcApp(t);
  const clock = new ManualTimers(1000);
  const daemon = await startTestDaemon(
    t,
    // A probe timeout no loaded machine reaches: 1,000 connections arrive beside each probe, and a probe that timed out is a 503 cached for the TTL (seen: 1 s ran out in a CI run).
    ["--readiness-required-http", `mesh=${mesh.url}/ready`, "--readiness-required-grpc", `db=127.0.0.1:${db.port}`, "--readiness-cache-ttl", "1s", "--readiness-upstream-timeout", "30s"],
    undefined,
    { timers: clock },
  );
  const agent = new Agent({ keepAlive: true, maxSockets: 1000 });
  t.teardown(() => agent.destroy());
  const readyz = () =>
    new Promise<number>((resolve, reject) => {
      request({ host: "127.0.0.1", port: daemon.port, path: "/readyz", agent }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      })
        .on("error", reject)
        .end();
    });
  // The app prints each call on a pipe that may trail its answer: wait for the line, then count.
  const checksSeen = () => db.calls.filter((line) => line === "check ").length;
  const untilChecks = (count: number) =>
    new Promise<void>((resolve) => {
      const look = () => {
        if (checksSeen() < count) return;
        db.child.stdout!.off("data", look);
        resolve();
      };
      db.child.stdout!.on("data", look);
      look();
    });
  for (let ttl = 1; ttl <= 3; ttl++) {
    const statuses = await Promise.all(Array.from({ length: 1000 }, readyz));
    t.ok(statuses.every((status) => status === 200), `1,000 answers of 200 in TTL ${ttl}`);
    t.equal(mesh.received.length, ttl, `the HTTP check's endpoint asked once in TTL ${ttl}`);
    await untilChecks(ttl);
    t.equal(checksSeen(), ttl, `the gRPC check's server asked once in TTL ${ttl}`);
    clock.time += 1000;
  }
});

t.test("endpoints that never answer: /readyz answers at the probe timeout with the timeout reason", { skip: grpcMissing }, async (t) => {
  const mesh = await startUpstream(t);
  mesh.handleRaw(() => {}); // accepts, reads the request, never answers
  const db = await startGrpcApp(t);
  await db.set("", "HANG");
  const daemon = await startTestDaemon(t, [
    "--readiness-required-http", `mesh=${mesh.url}/ready`,
    "--readiness-required-grpc", `db=127.0.0.1:${db.port}`,
    "--readiness-upstream-timeout", "300ms",
    "--readiness-cache-ttl", "0s",
  ]);
  const started = performance.now();
  const reply = await send(daemon.port, "/readyz?verbose");
  const elapsed = performance.now() - started;
  t.equal(reply.status, 503);
  t.equal(reply.text(), "[-]mesh failed: timeout after 300ms\n[-]db failed: timeout after 300ms\n[+]shutdown ok\nreadyz check failed\n");
  t.comment(`answered in ${elapsed.toFixed(0)} ms with a 300 ms probe timeout, both probes side by side`);
});
