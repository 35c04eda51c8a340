// The shipped bundle and single binary (not the sources): the kubelet-shaped prober reads the proxy's gRPC health, and the gRPC upstream check follows a grpcio app, node:http2 loaded past the bundle's alias.
import t from "tap";
import { grpcioMissing, startGrpcApp } from "../helpers/grpc-app.js";
import { kubeProbeBinary, runKubeProbe } from "../helpers/kube-probe.js";
import { BUILT_ARTIFACTS, spawnDaemon } from "../helpers/spawn-daemon.js";
import { send } from "../helpers/http-client.js";

const built = kubeProbeBinary();
const missing = "missing" in built ? built.missing : grpcioMissing();
if (missing) t.comment(`skipping: ${missing}`);

for (const artifact of BUILT_ARTIFACTS) {
  t.test(`${artifact.name}: gRPC health and the gRPC upstream check`, { skip: missing ?? (artifact.built ? false : `${artifact.name} not built (make build)`) }, async (t) => {
    const binary = (built as { path: string }).path;
    const app = await startGrpcApp(t);
    const daemon = await spawnDaemon(t, artifact.command, [`--upstream=http://127.0.0.1:${app.port}`, "--readiness-upstream-grpc-service=", "--readiness-cache-ttl=0s"]);
    t.same(await runKubeProbe(binary, daemon.port), { exitCode: 0, line: "status SERVING" }, "the proxy's answer, the app's health SERVING");
    t.same(await runKubeProbe(binary, daemon.port, { service: "upstream" }), { exitCode: 0, line: "status SERVING" });
    await app.set("", "NOT_SERVING");
    t.same(await runKubeProbe(binary, daemon.port), { exitCode: 1, line: "status NOT_SERVING" }, "follows the app's health");
    t.equal((await send(daemon.port, "/readyz/upstream")).text(), "upstream failed: status NOT_SERVING\n");
    t.same(await runKubeProbe(binary, daemon.port, { service: "livez" }), { exitCode: 0, line: "status SERVING" });
    await daemon.waitForLog("upstream health check failing; reporting not ready");
    t.match(daemon.records.find((record) => record.msg === "upstream health check failing; reporting not ready"), { service: "" });
    daemon.child.kill("SIGTERM");
    t.equal(await daemon.exited, 0);
  });
}
