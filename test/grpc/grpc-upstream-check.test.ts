// --readiness-upstream-grpc-service end to end in the daemon: /readyz?verbose and /readyz/upstream follow a grpcio app whose health flips; the transition lines name `service`; the still-failing line; the option's usage errors.
import t from "tap";
import { parseCommandLine } from "../../src/cli.js";
import { LOG_MESSAGES } from "../../src/readiness/transitions.js";
import { grpcioMissing, startGrpcApp } from "../helpers/grpc-app.js";
import { send } from "../helpers/http-client.js";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { closedPort, ManualTimers } from "../helpers/test-doubles.js";

const missing = grpcioMissing();

function run(argv: string[], env: NodeJS.ProcessEnv = {}) {
  let err = "";
  const result = parseCommandLine(argv, env, { writeOut: () => {}, writeErr: (text) => (err += text) });
  return { result, err };
}

t.test("the option: flag and env, \"\" kept as a service by the flag, an empty variable unset; with --readiness-upstream-path, one usage line and exit 2", async (t) => {
  for (const [argv, env, expected] of [
    [["--readiness-upstream-grpc-service", ""], {}, ""],
    [["--readiness-upstream-grpc-service=my.Service"], {}, "my.Service"],
    // One rule for every variable: empty is unset (a Helm chart's blank value must not turn a check on).
    [[], { READINESS_PROXY_UPSTREAM_GRPC_SERVICE: "" }, undefined],
    [[], { READINESS_PROXY_UPSTREAM_GRPC_SERVICE: "env.Service" }, "env.Service"],
    [[], {}, undefined],
  ] as const) {
    const { result } = run([...argv], env);
    t.equal(result.action === "run" ? result.config.upstreamGrpcService : "refused", expected, `${argv.join(" ")} ${JSON.stringify(env)}`);
  }
  const both = (source: string, value: string) => `error: ${source}: expected either it or --readiness-upstream-path, not both, got ${JSON.stringify(value)}`;
  for (const [argv, env, message] of [
    [["--readiness-upstream-grpc-service", "", "--readiness-upstream-path", "/ready"], {}, both("--readiness-upstream-grpc-service", "")],
    [["--readiness-upstream-path", "/ready"], { READINESS_PROXY_UPSTREAM_GRPC_SERVICE: "env.Service" }, both("READINESS_PROXY_UPSTREAM_GRPC_SERVICE", "env.Service")],
    [["--readiness-upstream-grpc-service", ""], { READINESS_PROXY_UPSTREAM_PATH: "/ready" }, both("--readiness-upstream-grpc-service", "")],
  ] as const) {
    const { result, err } = run([...argv], env);
    t.same(result, { action: "exit", exitCode: 2 });
    t.equal(err.trimEnd(), message);
    t.notMatch(err, /\n.+\n/, "one line");
  }
  t.equal(run(["--readiness-upstream-path", "/ready"], { READINESS_PROXY_UPSTREAM_GRPC_SERVICE: "" }).result.action, "run", "an empty variable is no second check");
});

t.test("the upstream check follows the app's gRPC health: verbose, /readyz/upstream, one line per transition naming the service", { skip: missing }, async (t) => {
  const app = await startGrpcApp(t);
  const daemon = await startTestDaemon(t, ["--upstream", `http://127.0.0.1:${app.port}`, "--readiness-upstream-grpc-service", "", "--readiness-cache-ttl", "0s"]);
  const verbose = async () => (await send(daemon.port, "/readyz?verbose")).text();
  t.equal(await verbose(), "[+]upstream ok\n[+]shutdown ok\nreadyz check passed\n");
  for (const [mode, reason] of [
    ["NOT_SERVING", "status NOT_SERVING"],
    ["UNKNOWN", "status UNKNOWN"],
    ["NOTFOUND", "status SERVICE_UNKNOWN"],
    ["UNIMPLEMENTED", "grpc status 12"],
  ] as const) {
    await app.set("", mode);
    t.equal(await verbose(), `[-]upstream failed: ${reason}\n[+]shutdown ok\nreadyz check failed\n`, mode);
    const single = await send(daemon.port, "/readyz/upstream");
    t.equal(single.status, 503);
    t.equal(single.text(), `upstream failed: ${reason}\n`);
  }
  await app.set("", "SERVING");
  t.equal((await send(daemon.port, "/readyz")).status, 200, "ready again");
  const transitions = daemon.logs.records.filter((record) => record.msg === LOG_MESSAGES.upstreamFailing || record.msg === LOG_MESSAGES.upstreamPassing);
  t.match(transitions, [
    { level: 30, msg: LOG_MESSAGES.upstreamPassing, service: "" },
    // The reason ?verbose and /readyz/upstream show, word for word; a NOT_SERVING answer has no other detail.
    { level: 40, msg: LOG_MESSAGES.upstreamFailing, service: "", reason: "status NOT_SERVING", err: undefined },
    { level: 30, msg: LOG_MESSAGES.upstreamPassing, service: "" },
  ]);
  t.equal(transitions.length, 3, "one line per transition, not per probe");
  t.notOk(transitions.some((record) => "path" in record), "service, never path");
  const listening = daemon.logs.records.find((record) => record.msg === "listening");
  t.match(listening, { upstreamGrpcService: "" });
});

t.test("a dead app: connection refused, then the still-failing line names the check", async (t) => {
  const daemon = await startTestDaemon(t, [
    "--upstream",
    `http://127.0.0.1:${await closedPort()}`,
    "--readiness-upstream-grpc-service",
    "my.Service",
    "--readiness-cache-ttl",
    "0s",
    "--readiness-warn-after",
    "0s",
  ]);
  t.equal((await send(daemon.port, "/readyz/upstream")).text(), "upstream failed: connection refused\n");
  await send(daemon.port, "/readyz");
  t.match(
    daemon.logs.records.filter((record) => record.msg === LOG_MESSAGES.upstreamFailing),
    // Failing from the first probe is a start, not a warning: the still-failing line below is the warning.
    [{ level: 30, service: "my.Service", reason: "connection refused", err: /ECONNREFUSED/ }],
  );
  t.match(
    daemon.logs.records.filter((record) => record.msg === LOG_MESSAGES.stillFailing),
    [{ level: 40, check: "upstream", reason: "connection refused" }],
  );
});

t.test("a hung app: /readyz answers within the probe timeout", { skip: missing }, async (t) => {
  const app = await startGrpcApp(t);
  await app.set("", "HANG");
  // The probe's timeout on hand-moved timers, moved until the answer comes: a wedge would wait for the app forever (the real clock's case is test/process/timeouts-on-the-binary.test.ts).
  const timers = new ManualTimers();
  const daemon = await startTestDaemon(t, ["--upstream", `http://127.0.0.1:${app.port}`, "--readiness-upstream-grpc-service", "", "--readiness-upstream-timeout", "200ms", "--readiness-cache-ttl", "0s"], undefined, { timers });
  const reply = await timers.until(send(daemon.port, "/readyz?verbose"), 10_000);
  t.equal(reply.text(), "[-]upstream failed: timeout after 200ms\n[+]shutdown ok\nreadyz check failed\n");
  t.ok(timers.now() >= 200, "not before the probe's timeout, on its clock");
});
