// The YAML snippets of README.md and docs/kubernetes.md read as someone about to deploy them would: fields Kubernetes has, tagged images, the app on loopback, one probe rhythm.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import t from "tap";
import { parse } from "yaml";
import type { KubeObject } from "./manifests.js";

const root = join(import.meta.dirname, "../..");
const DOCS = ["README.md", "docs/kubernetes.md"];

/** Every ```yaml block of a Markdown file, parsed. */
function yamlBlocks(file: string): KubeObject[] {
  const text = readFileSync(join(root, file), "utf8");
  // A block inside a list item is indented, its fence too: the indentation is the list's, not the YAML's.
  return [...text.matchAll(/^( *)```yaml\n([\s\S]*?)\n *```/gm)].map((match) => parse(match[2]!.split("\n").map((line) => line.slice(match[1]!.length)).join("\n")) as KubeObject);
}

/** Every object in a parsed block that looks like a container (a name and an image), at any depth. */
function containersIn(value: unknown): KubeObject[] {
  if (Array.isArray(value)) return value.flatMap(containersIn);
  if (typeof value !== "object" || value === null) return [];
  const object = value as KubeObject;
  return [...(typeof object.name === "string" && typeof object.image === "string" ? [object] : []), ...Object.values(object).flatMap(containersIn)];
}

for (const file of DOCS) {
  t.test(`${file}: containers as the API takes them`, async (t) => {
    const containers = yamlBlocks(file).flatMap(containersIn);
    t.ok(containers.length > 0 || file === "docs/kubernetes.md", `${containers.length} containers`);
    for (const container of containers) {
      t.match(container.image, /:[\w.-]+$/, `${container.name}: a tagged image, never an implicit :latest`);
      for (const port of container.ports ?? []) t.notOk("appProtocol" in port, `${container.name}: no appProtocol on a container port (a Service port's field)`);
    }
  });
}

t.test("README.md's Kubernetes snippet: the app bound to loopback, the probe rhythm of the manifests", async (t) => {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const block = parse(/```yaml\n([\s\S]*?)\n```/.exec(readme.slice(readme.indexOf("\n## Kubernetes\n")))![1]!) as KubeObject;
  const container = block.containers[0];
  const app = container.args.slice(container.args.indexOf("--") + 1).map(String);
  t.same(app.slice(-2), ["--bind", "127.0.0.1"], "the app listens on loopback only: nothing reaches it around the proxy");
  const manifests = ["deployment-entrypoint.yaml", "deployment-sidecar.yaml", "deployment-grpc.yaml"].map((name) => readFileSync(join(root, "docs/deploy", name), "utf8"));
  for (const manifest of manifests) t.match(manifest, /periodSeconds: 2\n\s+failureThreshold: 1\n/, "the manifests probe readiness 2s × 1");
  t.match(container.readinessProbe, { periodSeconds: 2, failureThreshold: 1 }, "so does the README");
});
