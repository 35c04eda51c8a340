// The shipped deployment examples: the Kubernetes YAML parses and probes the right paths; the Dockerfile's shape and inputs hold.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import t from "tap";
import { parseAllDocuments } from "yaml";

const root = join(import.meta.dirname, "../..");

interface Container {
  name: string;
  args?: string[];
  ports?: Array<{ name: string; containerPort: number }>;
  readinessProbe?: { httpGet: { path: string; port: string } };
  livenessProbe?: { httpGet: { path: string; port: string } };
}

t.test("deployment.yaml parses and wires the probes to the proxy's port", async (t) => {
  const documents = parseAllDocuments(readFileSync(join(root, "docs/deploy/deployment.yaml"), "utf8"));
  for (const document of documents) t.same(document.errors, [], "no YAML errors");
  const [deployment, service] = documents.map((document) => document.toJS() as Record<string, any>);
  t.equal(deployment?.kind, "Deployment");
  t.equal(service?.kind, "Service");
  const containers = deployment?.spec.template.spec.containers as Container[];
  const proxy = containers.find((container) => container.name === "readiness-proxy")!;
  t.ok(proxy.args?.includes("--readiness-required-listener=15008"));
  t.ok(proxy.args?.some((arg) => arg.startsWith("--shutdown-delay=")));
  t.same(proxy.readinessProbe?.httpGet, { path: "/readyz", port: "http" });
  t.same(proxy.livenessProbe?.httpGet, { path: "/health", port: "http" });
  t.equal(proxy.ports?.[0]?.containerPort, 8080);
  t.equal(service?.spec.ports[0].targetPort, "http");
  const delay = Number(/=(\d+)s$/.exec(proxy.args!.find((arg) => arg.startsWith("--shutdown-delay="))!)?.[1]);
  const timeout = Number(/=(\d+)s$/.exec(proxy.args!.find((arg) => arg.startsWith("--shutdown-timeout="))!)?.[1]);
  t.ok(deployment?.spec.template.spec.terminationGracePeriodSeconds > delay + timeout, "grace period outlasts the drain");
});

t.test("Dockerfile: multi-stage, non-root, binary entrypoint, every copied file exists", async (t) => {
  const dockerfile = readFileSync(join(root, "docs/deploy/Dockerfile"), "utf8");
  const instructions = dockerfile
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
  const from = instructions.filter((line) => line.startsWith("FROM "));
  t.equal(from.length, 2, "a build stage and a runtime stage");
  t.match(from[1], /distroless|slim/, "a minimal runtime base");
  t.ok(instructions.includes("USER nonroot"), "runs as non-root");
  t.ok(instructions.includes('ENTRYPOINT ["/readiness-proxy"]'));
  for (const line of instructions.filter((entry) => entry.startsWith("COPY ") && !entry.includes("--from="))) {
    const sources = line.split(/\s+/).slice(1, -1);
    for (const source of sources) t.ok(existsSync(join(root, source)), `COPY source ${source} exists`);
  }
  const copiedFromBuild = instructions.find((line) => line.includes("--from=build"));
  t.match(copiedFromBuild, /\/src\/dist\/readiness-proxy /, "ships the binary make build produces");
});
