// The Pod and Deployment manifests of docs/deploy/, made runnable by podman 4.3's kube play here: the images substituted, and only what podman cannot do changed.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments, stringify } from "yaml";
import { busyboxHttpd, busyboxHttpdAsPid1, busyboxIdleAsPid1, type AppImages } from "./app-images.js";

const deployDir = join(import.meta.dirname, "../../docs/deploy");

/** An httpGet probe, or the kubelet's gRPC probe (grpc.health.v1 Check on a numbered port). */
export interface Probe {
  httpGet?: { path: string; port: string | number };
  grpc?: { port: number; service?: string };
}

export interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  restartPolicy?: string;
  ports?: unknown[];
  startupProbe?: Probe;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  securityContext?: { readOnlyRootFilesystem?: boolean; capabilities?: { drop?: string[] } };
}

export interface PlayableManifest {
  readonly file: string;
  /** The YAML that kube play gets. */
  readonly yaml: string;
  /** The readiness-proxy container, as played. */
  readonly proxy: Container;
  /** Its --listen port and the ports its --readiness-required-listener flags name. */
  readonly listenPort: number;
  readonly requiredPorts: number[];
  /** The port of its --upstream, where the busybox stand-in listens. */
  readonly upstreamPort: number;
  /** Its --readiness-upstream-grpc-service, when the app's gRPC health is a check (busybox has none). */
  readonly upstreamGrpcService: string | undefined;
  /** Whether readiness-proxy runs the app (after `--`), or sits beside it. */
  readonly form: "entrypoint" | "sidecar";
  readonly terminationGracePeriodSeconds: number;
  /** What was changed, for the test's comments. */
  readonly changes: string[];
}

const flag = (args: readonly string[], name: string) => args.filter((arg) => arg.startsWith(`${name}=`)).map((arg) => arg.slice(name.length + 1));

/** Every file under docs/deploy/ with a Pod or Deployment in it. */
export function workloadManifests(): string[] {
  return readdirSync(deployDir)
    .filter((file) => /\.ya?ml$/.test(file))
    .filter((file) => parseAllDocuments(readFileSync(join(deployDir, file), "utf8")).some((doc) => ["Pod", "Deployment"].includes(String(doc.get("kind")))));
}

/**
 * The manifest as kube play runs it on this machine:
 * - one replica (podman makes a pod per replica, and with the host network only one can bind the port);
 * - no `ports` (podman 4.3 refuses port mappings with the host network);
 * - a native sidecar (init container with restartPolicy: Always) run as a container beside the app,
 *   same args, env and securityContext (podman 4.3 refuses probes on init containers, CONTRACT §12);
 * - our image for registry.example/readiness-proxy; for the entrypoint form's app image, the image
 *   docs/deploy/app-entrypoint.Dockerfile builds, its app after `--` replaced by busybox httpd on the
 *   port the proxy's --upstream names; any other app image is the stand-in running busybox httpd there,
 *   or idle when the app's gRPC health is a check (then the test serves it);
 * - Services and other kinds left out.
 */
export function playable(file: string, images: AppImages): PlayableManifest {
  const changes: string[] = [];
  const documents = parseAllDocuments(readFileSync(join(deployDir, file), "utf8")).map((doc) => doc.toJS() as Record<string, any>);
  const workloads = documents.filter((doc) => doc.kind === "Pod" || doc.kind === "Deployment");
  if (workloads.length !== 1) throw new Error(`${file}: expected one Pod or Deployment, found ${workloads.length}`);
  const workload = workloads[0]!;
  if (workload.kind === "Deployment" && workload.spec.replicas !== 1) {
    changes.push(`replicas ${workload.spec.replicas} -> 1`);
    workload.spec.replicas = 1;
  }
  const pod = workload.kind === "Deployment" ? workload.spec.template.spec : workload.spec;
  const sidecars = ((pod.initContainers ?? []) as Container[]).filter((container) => container.restartPolicy === "Always");
  if (sidecars.length > 0) {
    changes.push(`init container ${sidecars.map((container) => container.name).join(", ")} run beside the app`);
    pod.containers = [...sidecars.map(({ restartPolicy: _always, ...container }) => container), ...pod.containers];
    pod.initContainers = (pod.initContainers as Container[]).filter((container) => !sidecars.includes(container));
    if (pod.initContainers.length === 0) delete pod.initContainers;
  }
  const containers = pod.containers as Container[];
  const proxy = containers.find((container) => container.image.startsWith("registry.example/readiness-proxy:")) ?? containers.find((container) => container.args?.includes("--"));
  if (!proxy) throw new Error(`${file}: no readiness-proxy container (our image, or an app image whose args hold "--")`);
  const upstream = new URL(flag(proxy.args ?? [], "--upstream")[0] ?? "http://127.0.0.1:8000");
  const app = busyboxHttpd(`${upstream.hostname}:${upstream.port}`);
  const upstreamGrpcService = flag(proxy.args ?? [], "--readiness-upstream-grpc-service")[0];
  for (const container of containers) {
    if (container.ports) {
      delete container.ports;
      changes.push(`${container.name}: no ports`);
    }
    if (container === proxy && container.image.startsWith("registry.example/readiness-proxy:")) {
      container.image = images.proxy;
    } else if (container === proxy) {
      const args = container.args!;
      changes.push(`${container.name}: image ${container.image} built from app-entrypoint.Dockerfile, app "${args.slice(args.indexOf("--") + 1).join(" ")}" -> "${app.join(" ")}"`);
      container.image = images.appEntrypoint;
      container.args = [...args.slice(0, args.indexOf("--") + 1), ...app];
    } else if (upstreamGrpcService !== undefined) {
      // The app's gRPC health is a check: the test plays the app itself (a grpcio app in the pod's
      // network namespace, whose health it flips); the stand-in only stands.
      const command = busyboxIdleAsPid1();
      changes.push(`${container.name}: image ${container.image} -> the busybox stand-in, idle (the test serves the app's gRPC health on ${upstream.port})`);
      container.image = images.standIn;
      container.command = command;
      delete container.args;
    } else {
      const command = busyboxHttpdAsPid1(`${upstream.hostname}:${upstream.port}`);
      changes.push(`${container.name}: image ${container.image} -> the busybox stand-in, command ${JSON.stringify(command)}`);
      container.image = images.standIn;
      container.command = command;
      delete container.args;
    }
  }
  const listen = flag(proxy.args ?? [], "--listen")[0] ?? ":8080";
  return {
    file,
    yaml: stringify(workload),
    proxy,
    listenPort: Number(/:(\d+)$/.exec(listen)?.[1]),
    requiredPorts: flag(proxy.args ?? [], "--readiness-required-listener").map(Number).sort((a, b) => a - b),
    upstreamPort: Number(upstream.port || 80),
    upstreamGrpcService,
    form: proxy.args?.includes("--") ? "entrypoint" : "sidecar",
    terminationGracePeriodSeconds: pod.terminationGracePeriodSeconds ?? 30,
    changes,
  };
}
