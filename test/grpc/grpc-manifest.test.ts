// docs/deploy/deployment-grpc.yaml: the kubelet's gRPC probes on the proxy's port (readiness "", liveness and startup livez), the app's own health required, args the proxy accepts, HTTP/2 sizing, a numeric Service targetPort, the restricted security settings.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import t from "tap";
import { parseAllDocuments } from "yaml";
import { parseCommandLine } from "../../src/cli.js";

const file = join(import.meta.dirname, "../../docs/deploy/deployment-grpc.yaml");

t.test("deployment-grpc.yaml", async (t) => {
  const documents = parseAllDocuments(readFileSync(file, "utf8"));
  for (const document of documents) t.same(document.errors, [], "no YAML errors");
  const [deployment, service] = documents.map((document) => document.toJS() as Record<string, any>);
  t.equal(deployment?.kind, "Deployment");
  const pod = deployment!.spec.template.spec;
  const proxy = pod.initContainers[0];
  t.equal(proxy.restartPolicy, "Always", "a native sidecar");
  const commandLine = parseCommandLine(proxy.args, {}, { writeOut: () => {}, writeErr: (text) => t.fail(text) });
  t.equal(commandLine.action, "run", "the proxy accepts its args");
  const port = commandLine.action === "run" ? commandLine.config.listen.port : 0;
  // Without it the proxy's listener alone made the probe SERVING while every call failed UNAVAILABLE (issue 41).
  t.equal(commandLine.action === "run" && commandLine.config.upstreamGrpcService, "", "readiness requires the app's own grpc.health.v1 for the whole server");
  t.match(proxy.resources, { requests: { memory: "128Mi" }, limits: { memory: "256Mi" } }, "sized for HTTP/2's measured 116 MiB peak (docs/kubernetes.md, Memory), not HTTP/1.1's");
  t.same(proxy.readinessProbe.grpc, { port }, "readinessProbe: grpc on the proxy's port, service \"\" (= /readyz)");
  t.same(proxy.livenessProbe.grpc, { port, service: "livez" });
  t.same(proxy.startupProbe.grpc, { port, service: "livez" }, "startup on liveness: readiness waits for ports the app opens");
  t.equal(service?.kind, "Service");
  t.equal(service!.spec.ports[0].targetPort, port, "targetPort by number");
  t.equal(service!.spec.ports[0].appProtocol, "kubernetes.io/h2c");
  t.same(pod.securityContext, { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
  for (const container of [...pod.initContainers, ...pod.containers]) {
    t.match(container.securityContext, { runAsNonRoot: true, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } }, container.name);
    t.ok(container.resources?.limits?.memory, `${container.name}: a memory limit`);
  }
});
