// The kubelet-shaped prober itself against a grpcio app, no proxy: what it prints and exits for each answer, and that the app sees kube-probe/1.31.
import t from "tap";
import { grpcioMissing, startGrpcApp } from "../helpers/grpc-app.js";
import { kubeProbeBinary, runKubeProbe } from "../helpers/kube-probe.js";
import { closedPort } from "../helpers/test-doubles.js";

const built = kubeProbeBinary();
const missing = "missing" in built ? built.missing : grpcioMissing();
if (missing) t.comment(`skipping: ${missing}`);

t.test("SERVING passes; NOT_SERVING, NOT_FOUND, UNIMPLEMENTED fail; a closed port fails to dial within the timeout", { skip: missing }, async (t) => {
  const binary = (built as { path: string }).path;
  const app = await startGrpcApp(t);
  t.same(await runKubeProbe(binary, app.port), { exitCode: 0, line: "status SERVING" });
  await app.waitForCall(/^user-agent kube-probe\/1\.31 grpc-go\//);
  t.pass("the app saw the kubelet's user agent");
  await app.set("", "NOT_SERVING");
  t.same(await runKubeProbe(binary, app.port), { exitCode: 1, line: "status NOT_SERVING" });
  t.match(await runKubeProbe(binary, app.port, { service: "nope" }), { exitCode: 1, line: /code 5 NotFound/ });
  await app.set("x", "UNIMPLEMENTED");
  t.match(await runKubeProbe(binary, app.port, { service: "x" }), { exitCode: 1, line: /does not implement the grpc health protocol/ });
  t.match(await runKubeProbe(binary, await closedPort(), { timeout: "300ms" }), { exitCode: 2, line: /^timeout: failed to connect service/ });
});
