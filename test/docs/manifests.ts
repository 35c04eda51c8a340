// The Kubernetes objects the docs ship: every document of docs/deploy/*.yaml, the pod spec snippet of README.md's "Kubernetes" section and docs/kubernetes.md's Jobs, parsed with yaml.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments, parse } from "yaml";

const root = join(import.meta.dirname, "../..");
const deployDir = join(root, "docs/deploy");

/** A Kubernetes object as YAML gives it: checked field by field. */
export type KubeObject = Record<string, any>;

/** One parsed document and where it came from, for messages. */
export interface SourcedObject {
  readonly source: string;
  readonly object: KubeObject;
}

/** Every document of every YAML file under docs/deploy/; throws on a YAML error (the file is broken). */
export function deployObjects(): SourcedObject[] {
  const objects: SourcedObject[] = [];
  for (const file of readdirSync(deployDir).filter((name) => /\.ya?ml$/.test(name)).sort()) {
    for (const document of parseAllDocuments(readFileSync(join(deployDir, file), "utf8"))) {
      if (document.errors.length > 0) throw new Error(`docs/deploy/${file}: ${document.errors[0]!.message}`);
      const object = document.toJS() as KubeObject | null;
      if (object) objects.push({ source: `docs/deploy/${file} ${object.kind}/${object.metadata?.name ?? "?"}`, object });
    }
  }
  return objects;
}

/**
 * README.md's Kubernetes snippet: the first ```yaml block under "## Kubernetes", a pod template's
 * spec (no kind). Returned as a Pod so that the same rules read it.
 */
export function readmePod(): SourcedObject {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("\n## Kubernetes\n"));
  const block = /```yaml\n([\s\S]*?)\n```/.exec(section);
  if (!block) throw new Error("README.md: no ```yaml block under ## Kubernetes");
  const spec = parse(block[1]!) as KubeObject;
  return { source: "README.md Kubernetes snippet", object: { kind: "Pod", metadata: { name: "readme", labels: {} }, spec } };
}

/** The Jobs of docs/kubernetes.md's "A Job behind a mesh": every ```yaml block there whose kind is Job, in order. */
export function kubernetesMdJobs(): SourcedObject[] {
  const text = readFileSync(join(root, "docs/kubernetes.md"), "utf8");
  const start = text.indexOf("\n## A Job behind a mesh\n");
  if (start < 0) throw new Error('docs/kubernetes.md: no "## A Job behind a mesh" section');
  const section = text.slice(start, text.indexOf("\n## ", start + 1));
  return [...section.matchAll(/^```yaml\n([\s\S]*?)\n```/gm)]
    .map((match) => parse(match[1]!) as KubeObject)
    .filter((object) => object.kind === "Job")
    .map((object, index) => ({ source: `docs/kubernetes.md Job ${index + 1}/${object.metadata?.name ?? "?"}`, object }));
}

/** A workload's pod: its template's spec and labels for a Deployment (or similar), its own for a Pod. */
export interface PodOf {
  readonly source: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly spec: KubeObject;
}

const WORKLOAD_KINDS = ["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"];

/** The pods the objects define (Pods and the templates of workloads); other kinds give none. */
export function podsOf(objects: readonly SourcedObject[]): PodOf[] {
  return objects.flatMap(({ source, object }) => {
    if (object.kind === "Pod") return [{ source, labels: object.metadata?.labels ?? {}, spec: object.spec }];
    if (WORKLOAD_KINDS.includes(object.kind)) return [{ source, labels: object.spec.template.metadata?.labels ?? {}, spec: object.spec.template.spec }];
    return [];
  });
}
