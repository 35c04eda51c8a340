// README.md's gRPC example, run as written against the built binary and docs/examples/grpc-health-server.py: NOT_SERVING while the app warms up, then SERVING; other services reach the app.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import t from "tap";
import { grpcioMissing, startGrpcClient, SYSTEM_PYTHON } from "../helpers/grpc-app.js";
import { send } from "../helpers/http-client.js";
import { BINARY, spawnDaemon } from "../helpers/spawn-daemon.js";
import { closedPort } from "../helpers/test-doubles.js";
import { existsSync } from "node:fs";

const root = join(import.meta.dirname, "../..");
const readme = readFileSync(join(root, "README.md"), "utf8");
const section = readme.slice(readme.indexOf("\n## HTTP/2 cleartext and gRPC\n"));
/** The first ```sh block of the section: the command a reader copies. */
const command = /```sh\n([\s\S]*?)\n```/.exec(section)![1]!.replace(/\\\n\s*/g, "").trim().split(/\s+/);

t.test("the command is the proxy in front of the shipped example app", async (t) => {
  t.same(command.slice(0, 1), ["readiness-proxy"]);
  t.same(command.slice(command.indexOf("--")), ["--", "python3", "docs/examples/grpc-health-server.py", "50051"]);
  t.ok(command.includes("--readiness-upstream-grpc-service="), "the app's own health is the upstream check");
  t.ok(existsSync(join(root, "docs/examples/health.proto")), "the proto the grpcurl lines name is shipped");
});

const skip = grpcioMissing() ?? (!existsSync(BINARY) && "the binary is not built: run make build");
t.test("run as written: readiness follows the app's health", { skip }, async (t) => {
  const appPort = await closedPort();
  // The README's flags and app, with free ports for this machine and Debian's interpreter (python3-grpcio).
  const flags = command.slice(1, command.indexOf("--")).map((arg) => arg.replace("127.0.0.1:50051", `127.0.0.1:${appPort}`)).filter((arg, index, all) => arg !== "--listen" && all[index - 1] !== "--listen");
  const app = [SYSTEM_PYTHON, join(root, "docs/examples/grpc-health-server.py"), String(appPort), "1"];
  const daemon = await spawnDaemon(t, [BINARY], [...flags, "--readiness-cache-ttl", "0s", "--", ...app]);
  t.teardown(() => {
    if (daemon.child.exitCode === null) daemon.child.kill("SIGTERM");
    return daemon.exited.then(() => undefined);
  });
  const reasons: string[] = [];
  // Bounded: 400 probes 25 ms apart; the app warms up for 1 s after python starts.
  for (let probe = 0; probe < 400 && reasons.at(-1) !== "ok"; probe++) {
    // The entrypoint form's listener-<port> comes first; the upstream check's line is the one followed here.
    const line = (await send(daemon.port, "/readyz?verbose")).text().split("\n").find((text) => /^\[[-+]\]upstream /.test(text)) ?? "no upstream line";
    const reason = line === "[+]upstream ok" ? "ok" : (/^\[-\]upstream failed: (.*)$/.exec(line)?.[1] ?? line);
    if (reason !== reasons.at(-1)) reasons.push(reason);
    if (reason !== "ok") await new Promise((resolve) => setTimeout(resolve, 25));
  }
  // Which the probes see before "ok" (connection refused, NOT_SERVING, both or, on a loaded machine
  // where the warm-up passes between two probes, neither), the machine decides: the rule holds in
  // any of those orders. The log says failing once, then passing, whenever a probe saw it fail.
  t.equal(reasons.at(-1), "ok", `ready once it says SERVING (${reasons.join(" -> ")})`);
  t.ok(reasons.slice(0, -1).every((reason) => reason === "connection refused" || reason === "status NOT_SERVING"), `before it, only the app's start and its warm-up (${reasons.join(" -> ")})`);
  // In the entrypoint form our lines share the app's stdout socket and are written off the loop, so
  // the passing line may land just after the probe that saw "ok": wait for it whenever it is due.
  const failing = daemon.records.some((record) => record.msg === "upstream health check failing; reporting not ready");
  if (reasons.length > 1 || failing) await daemon.waitForLog("upstream health check passing");
  const transitions = daemon.records.filter((record) => String(record.msg).startsWith("upstream health check"));
  if (reasons.length > 1 || transitions.length > 0) {
    t.match(transitions, [
      { msg: "upstream health check failing; reporting not ready", service: "" },
      { msg: "upstream health check passing", service: "" },
    ]);
    t.equal(transitions.length, 2, "each transition once");
  }
  const readyz = startGrpcClient(t, "check", daemon.port, "");
  t.equal(await readyz.waitForLine(/^(status|error)/), "status SERVING", 'service "": the proxy answers from /readyz');
  const other = startGrpcClient(t, "check", daemon.port, "my.Other");
  t.match(await other.waitForLine(/^(status|error)/), /^error NOT_FOUND .*my\.Other/, "any other service name is the app's to answer");
});
