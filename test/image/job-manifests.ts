// The Jobs of docs/kubernetes.md ("A Job behind a mesh") as pods podman 4.3's kube play runs: the Job's pod template, our images, an app that ends on its own, and a stand-in for the mesh's agent.
import { stringify } from "yaml";
import { kubernetesMdJobs } from "../docs/manifests.js";
import type { AppImages } from "./app-images.js";
import type { Container } from "./kube-manifests.js";

/** A Job's pod as played: its YAML and what the test asserts about it. */
export interface PlayableJob {
  /** The Job's mesh, from the agent URL's port: `istio` (15020) or `linkerd` (4191). */
  readonly mesh: string;
  /** The Pod that kube play gets (kube play 4.3 takes no Job). */
  readonly yaml: string;
  /** The container of the docs' Job, running readiness-proxy and the app. */
  readonly appContainer: string;
  /** The stand-in mesh agent's container. */
  readonly agentContainer: string;
  /** The proxy's --listen port (the docs' default, 8080), where the liveness probe asks /app-health. */
  readonly listenPort: number;
  /** The --app-exit-notify URL, where the stand-in listens. */
  readonly notifyUrl: URL;
  /** A name for this play: the mesh and what the app does. */
  readonly name: string;
  /** What was changed, for the test's comments. */
  readonly changes: string[];
}

/** The docs' Jobs, in order (Istio's, then Linkerd's). */
export const docsJobs = () => kubernetesMdJobs().map(({ object }) => object);

/** The line the stand-in agent writes to stderr for each request line and header it reads. */
export const AGENT_SEEN = "agent got:";

/**
 * A mesh agent's shutdown endpoint in busybox: nc accepts one connection, the handler logs the
 * request line and headers to stderr (the container's log), answers 200 and ends; nc, PID 1 of
 * its container, then exits 0, as the real agent exits when told to.
 */
function agentCommand(port: string): string[] {
  const handler = [
    `read -r line; line=$(printf %s "$line" | tr -d "\\r"); echo "${AGENT_SEEN} $line" >&2`,
    `while read -r header; do header=$(printf %s "$header" | tr -d "\\r"); [ -z "$header" ] && break; echo "${AGENT_SEEN} $header" >&2; done`,
    `printf "HTTP/1.1 200 OK\\r\\nContent-Length: 0\\r\\nConnection: close\\r\\n\\r\\n"`,
  ].join("; ");
  return ["busybox", "nc", "-l", "-p", port, "-e", "busybox", "sh", "-c", handler];
}

/**
 * The Job's pod template as a Pod, as kube play runs it here:
 * - no `ports` (podman 4.3 refuses port mappings with the host network);
 * - the app image: the one docs/deploy/app-entrypoint.Dockerfile builds (tini and readiness-proxy
 *   over the busybox stand-in), its app after `--` the test's `work` (a busybox command), and
 *   `--app-health-path` the path the stand-in serves when the test asks `/app-health`;
 * - a second container standing in for the mesh's injected agent, on the notify URL's port.
 * restartPolicy Never, the security context and the proxy's flags are the docs' own.
 */
export function playableJob(job: Record<string, any>, images: AppImages, play: { readonly name: string; readonly work: readonly string[]; readonly appHealthPath?: string }): PlayableJob {
  const changes: string[] = ["the Job's pod template played as a Pod (kube play takes no Job)"];
  const template = job.spec.template as { metadata?: Record<string, unknown>; spec: Record<string, any> };
  const spec = structuredClone(template.spec);
  if (spec.restartPolicy !== "Never" && spec.restartPolicy !== "OnFailure") throw new Error(`the Job's restartPolicy is ${spec.restartPolicy}: a Job's is Never or OnFailure`);
  const containers = spec.containers as Container[];
  const app = containers.find((container) => container.args?.includes("--"));
  if (!app || containers.length !== 1) throw new Error("expected one container, readiness-proxy running the app after --");
  const args = app.args!;
  const notify = args.filter((arg) => arg.startsWith("--app-exit-notify=")).map((arg) => new URL(arg.slice("--app-exit-notify=".length)));
  if (notify.length !== 1) throw new Error(`expected one --app-exit-notify, got ${notify.length}`);
  const notifyUrl = notify[0]!;
  const mesh = notifyUrl.port === "15020" ? "istio" : notifyUrl.port === "4191" ? "linkerd" : `port-${notifyUrl.port}`;
  const work = [...play.work];
  changes.push(`${app.name}: image ${app.image} built from app-entrypoint.Dockerfile, app "${args.slice(args.indexOf("--") + 1).join(" ")}" -> "${work.join(" ")}"`);
  app.image = images.appEntrypoint;
  app.args = [...args.slice(0, args.indexOf("--") + 1), ...work];
  const healthArg = app.args.findIndex((arg) => arg.startsWith("--app-health-path="));
  if (play.appHealthPath !== undefined && healthArg >= 0) {
    changes.push(`${app.name}: ${app.args[healthArg]} -> --app-health-path=${play.appHealthPath} (what busybox httpd serves)`);
    app.args[healthArg] = `--app-health-path=${play.appHealthPath}`;
  }
  if (app.ports) {
    delete app.ports;
    changes.push(`${app.name}: no ports`);
  }
  const agentContainer = `${mesh}-agent`;
  const agent: Container = { name: agentContainer, image: images.standIn, command: agentCommand(notifyUrl.port) };
  changes.push(`${agentContainer}: a busybox stand-in for the injected agent, answering one request on ${notifyUrl.port} and exiting`);
  spec.containers = [app, agent];
  const name = `${job.metadata.name}-${play.name}`;
  const pod = { apiVersion: "v1", kind: "Pod", metadata: { ...template.metadata, name }, spec };
  return { mesh, yaml: stringify(pod), appContainer: `${name}-${app.name}`, agentContainer: `${name}-${agentContainer}`, notifyUrl, name, changes, listenPort: Number(/:(\d+)$/.exec(app.args.find((arg) => arg.startsWith("--listen=")) ?? ":8080")?.[1]) };
}
