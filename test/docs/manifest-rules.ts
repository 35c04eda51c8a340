// What kubectl cannot check without a cluster: Pod Security "restricted", ports that resolve, and probe and grace-period timing against the proxy's own flags. Each rule returns the problems it found, as sentences.
import type { Config } from "../../src/config/config.js";
import { parseCommandLine } from "../../src/cli.js";
import { formatDuration } from "../../src/config/duration.js";
import type { KubeObject, PodOf, SourcedObject } from "./manifests.js";

/** What the grace period must leave beyond the proxy's whole stop: the kubelet's own latency, a slow app exit. */
export const GRACE_MARGIN_MS = 5_000;
/**
 * In the native sidecar form with the drain hooks, the app hears SIGTERM only after the drain:
 * the grace period must still leave it at least this for its own stop (--app-stop-timeout's
 * default, what the entrypoint form would give it).
 */
export const SIDECAR_APP_STOP_MS = 5_000;

/** Volume types Pod Security "restricted" allows (everything else, hostPath first, is refused). */
const RESTRICTED_VOLUMES = ["configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"];

const containersOf = (pod: KubeObject): KubeObject[] => [...(pod.initContainers ?? []), ...(pod.containers ?? []), ...(pod.ephemeralContainers ?? [])];

/** The Pod Security Standard "restricted" (and "baseline" under it), for one pod spec. */
export function podSecurityProblems(pod: KubeObject): string[] {
  const problems: string[] = [];
  const podContext = pod.securityContext ?? {};
  for (const field of ["hostNetwork", "hostPID", "hostIPC"]) if (pod[field] === true) problems.push(`${field}: true`);
  for (const volume of pod.volumes ?? []) {
    const type = Object.keys(volume).find((key) => key !== "name");
    if (!type || !RESTRICTED_VOLUMES.includes(type)) problems.push(`volume ${volume.name}: ${type ?? "no"} volume`);
  }
  if (podContext.runAsUser === 0) problems.push("pod runAsUser: 0");
  for (const container of containersOf(pod)) {
    const context = container.securityContext ?? {};
    const name = `container ${container.name}`;
    if ((context.runAsNonRoot ?? podContext.runAsNonRoot) !== true) problems.push(`${name}: runAsNonRoot is not true (pod or container)`);
    if (context.runAsUser === 0) problems.push(`${name}: runAsUser: 0`);
    if (context.privileged === true) problems.push(`${name}: privileged`);
    if (context.allowPrivilegeEscalation !== false) problems.push(`${name}: allowPrivilegeEscalation is not false`);
    if (!context.capabilities?.drop?.includes("ALL")) problems.push(`${name}: capabilities do not drop ALL`);
    for (const added of context.capabilities?.add ?? []) if (added !== "NET_BIND_SERVICE") problems.push(`${name}: adds capability ${added}`);
    const seccomp = (context.seccompProfile ?? podContext.seccompProfile)?.type;
    if (seccomp !== "RuntimeDefault" && seccomp !== "Localhost") problems.push(`${name}: seccompProfile ${seccomp ?? "unset"} (RuntimeDefault or Localhost)`);
    for (const port of container.ports ?? []) if (port.hostPort) problems.push(`${name}: hostPort ${port.hostPort}`);
  }
  return problems;
}

/** Beyond the standard, the house rule of the docs: a read-only root and a memory limit on every container. */
export function containerLimitProblems(pod: KubeObject): string[] {
  return containersOf(pod).flatMap((container) => [
    ...(container.securityContext?.readOnlyRootFilesystem === true ? [] : [`container ${container.name}: readOnlyRootFilesystem is not true`]),
    ...(container.resources?.limits?.memory ? [] : [`container ${container.name}: no memory limit`]),
  ]);
}

/** A readiness-proxy container: our image, or an app image whose args run the app after `--`. */
export const isProxy = (container: KubeObject) => /readiness-proxy/.test(String(container.image)) || (container.args ?? []).includes("--");

/** The proxy's Config as the program itself parses the container's args and env (literal values only). */
export function proxyConfig(container: KubeObject): Config {
  const env = Object.fromEntries((container.env ?? []).filter((variable: KubeObject) => variable.value !== undefined).map((variable: KubeObject) => [variable.name, String(variable.value)]));
  let refused = "";
  const commandLine = parseCommandLine((container.args ?? []).map(String), env, { writeOut: () => {}, writeErr: (text) => (refused += text) });
  if (commandLine.action !== "run") throw new Error(`container ${container.name}: the proxy refuses its args: ${refused.trim()}`);
  return commandLine.config;
}

/** The port `--listen` or `--metrics-listen` binds. */
const listenPortOf = (config: Config, which: "listen" | "metricsListen") => config[which]?.port;

/** A Service's targetPort and a PodMonitor's port must name a port of a regular container (Services ignore sidecars' names) or be a number the pod serves. */
export function portProblems(objects: readonly SourcedObject[], pods: readonly PodOf[]): string[] {
  const problems: string[] = [];
  const selected = (selector: Record<string, string> | undefined) => pods.filter((pod) => selector && Object.entries(selector).every(([key, value]) => pod.labels[key] === value));
  const regularNames = (pod: PodOf) => new Set<string>((pod.spec.containers ?? []).flatMap((container: KubeObject) => (container.ports ?? []).map((port: KubeObject) => port.name)));
  const servedNumbers = (pod: PodOf) =>
    new Set<number>([
      ...containersOf(pod.spec).flatMap((container) => (container.ports ?? []).map((port: KubeObject) => Number(port.containerPort))),
      ...containersOf(pod.spec)
        .filter(isProxy)
        .flatMap((container) => {
          const config = proxyConfig(container);
          return [listenPortOf(config, "listen"), listenPortOf(config, "metricsListen")].filter((port) => port !== undefined);
        }),
    ]);
  const resolve = (source: string, what: string, port: unknown, targets: PodOf[]) => {
    if (targets.length === 0) problems.push(`${source}: ${what} selects no pod of the docs`);
    for (const pod of targets) {
      if (typeof port === "number" ? !servedNumbers(pod).has(port) : !regularNames(pod).has(String(port))) {
        problems.push(`${source}: ${what} ${JSON.stringify(port)} is ${typeof port === "number" ? "a port nothing in" : "no named port of a regular container of"} ${pod.source}`);
      }
    }
  };
  for (const { source, object } of objects) {
    if (object.kind === "Service") {
      for (const port of object.spec.ports ?? []) resolve(source, `targetPort of ${port.name ?? port.port}`, port.targetPort ?? port.port, selected(object.spec.selector));
    }
    if (object.kind === "PodMonitor") {
      for (const endpoint of object.spec.podMetricsEndpoints ?? []) resolve(source, "port", endpoint.port, selected(object.spec.selector?.matchLabels));
    }
  }
  return problems;
}

/** How long a container's preStop hook sleeps (the sleep action, or exec of sleep N), in ms. */
function preStopSleepMs(container: KubeObject): number {
  const preStop = container.lifecycle?.preStop;
  if (preStop?.sleep) return Number(preStop.sleep.seconds) * 1000;
  const command = preStop?.exec?.command as string[] | undefined;
  return command?.[0]?.endsWith("sleep") ? Number(command[1]) * 1000 : 0;
}

/** The path of a container's `preStop: httpGet`, if that is its hook. */
const preStopHttpPath = (container: KubeObject): string | undefined => container.lifecycle?.preStop?.httpGet?.path;

/** Whether a container's `preStop` execs the proxy's `drain` command (CONTRACT §14). */
const drainsOnPreStop = (container: KubeObject): boolean => {
  const command = container.lifecycle?.preStop?.exec?.command as string[] | undefined;
  return command !== undefined && /readiness-proxy$/.test(command[0] ?? "") && command.slice(1).join(" ") === "drain";
};

/**
 * The native sidecar form's stop order (CONTRACT §14): an app container whose `preStop` is
 * `httpGet /wait-for-drain` on the proxy's port, and a sidecar proxy whose `preStop` runs
 * `readiness-proxy drain` against its admin listener (flag or env). Half of it is a mistake: the
 * app's hook alone waits 5 s for a drain that never begins; the sidecar's alone drains while the
 * app hears SIGTERM at once. A pod with neither passes.
 */
export function drainHookProblems(pod: KubeObject): string[] {
  const problems: string[] = [];
  const proxies = containersOf(pod).filter(isProxy);
  const waiting = (pod.containers ?? []).filter((container: KubeObject) => preStopHttpPath(container) === "/wait-for-drain");
  const draining = proxies.filter(drainsOnPreStop);
  for (const proxy of draining) {
    if (proxyConfig(proxy).adminListen === undefined) problems.push(`container ${proxy.name}: preStop runs readiness-proxy drain without --admin-listen (flag or READINESS_PROXY_ADMIN_LISTEN)`);
    if (proxyConfig(proxy).shutdownDelayMs === 0) problems.push(`container ${proxy.name}: preStop drains with --shutdown-delay 0s: the endpoints have no time to drop the pod`);
  }
  for (const app of waiting) {
    const port = Number(app.lifecycle.preStop.httpGet.port);
    if (!proxies.some((proxy: KubeObject) => proxyConfig(proxy).listen.port === port)) problems.push(`container ${app.name}: preStop httpGet /wait-for-drain port ${app.lifecycle.preStop.httpGet.port} is no proxy's --listen port (a number: a hook's named port resolves in its own container)`);
    if (draining.length === 0) problems.push(`container ${app.name}: preStop waits for a drain (/wait-for-drain) that no sidecar's preStop (readiness-proxy drain) begins`);
  }
  if (draining.length > 0 && waiting.length === 0) problems.push(`container ${draining[0]!.name}: preStop drains, but no app container's preStop waits for it (httpGet /wait-for-drain)`);
  return problems;
}

/**
 * Timing of one pod with a proxy: the time between SIGTERM and the listener closing (the proxy's
 * --shutdown-delay, after any preStop sleep: in the sidecar form the app's, which the proxy's
 * SIGTERM waits for) must hold each readiness probe's period × failure threshold; and the whole
 * stop plus a margin must fit terminationGracePeriodSeconds.
 */
export function timingProblems(pod: KubeObject): string[] {
  const problems: string[] = [];
  const containers = containersOf(pod);
  const proxies = containers.filter(isProxy);
  if (proxies.length === 0) return ["no readiness-proxy container"];
  const graceMs = Number(pod.terminationGracePeriodSeconds ?? 30) * 1000;
  const preStopMs = Math.max(0, ...containers.map(preStopSleepMs));
  for (const proxy of proxies) {
    const config = proxyConfig(proxy);
    const delayMs = preStopMs + config.shutdownDelayMs;
    for (const container of containers.filter((container) => container.readinessProbe)) {
      const probe = container.readinessProbe;
      const detectMs = Number(probe.periodSeconds ?? 10) * Number(probe.failureThreshold ?? 3) * 1000;
      if (detectMs > delayMs) problems.push(`container ${container.name}: readinessProbe periodSeconds × failureThreshold = ${formatDuration(detectMs)} > the ${formatDuration(delayMs)} shutdown delay`);
    }
    // The sidecar form's drain hooks: the app's stop comes after the drain, inside the same grace period.
    const appStopMs = config.appCommand.length > 0 ? config.appStopTimeoutMs : drainsOnPreStop(proxy) ? SIDECAR_APP_STOP_MS : 0;
    const budgetMs = delayMs + config.shutdownTimeoutMs + appStopMs + GRACE_MARGIN_MS;
    if (budgetMs > graceMs) {
      problems.push(
        `container ${proxy.name}: delay ${formatDuration(delayMs)} + timeout ${formatDuration(config.shutdownTimeoutMs)} + app stop ${formatDuration(appStopMs)} + margin ${formatDuration(GRACE_MARGIN_MS)} = ${formatDuration(budgetMs)} > terminationGracePeriodSeconds ${graceMs / 1000}`,
      );
    }
  }
  return problems;
}

/**
 * What /readyz waits for must include the app: the entrypoint form requires its loopback
 * upstream's port by itself (when it runs an app and `--readiness-upstream-listener` is on); the
 * sidecar form adds nothing, so its proxy must require the upstream's port or ask the app's health
 * (an HTTP path or its gRPC health), else the pod is ready before (or without) the app.
 */
export function readinessProblems(pod: KubeObject): string[] {
  return containersOf(pod)
    .filter(isProxy)
    .flatMap((proxy) => {
      const config = proxyConfig(proxy);
      const upstreamPort = Number(new URL(config.upstream.origin).port || 80);
      const entrypointCovers = config.appCommand.length > 0 && config.upstreamListener === "auto";
      const covered = entrypointCovers || config.requiredPorts.includes(upstreamPort) || config.upstreamHealthPath !== undefined || config.upstreamGrpcService !== undefined;
      return covered ? [] : [`container ${proxy.name}: /readyz never waits for the app: require its port ${upstreamPort} or its health`];
    });
}

/** Lines of a manifest's text (YAML args items: `- --readiness-required-listener=15008`) that require 15008 without saying, on that line or the two above, that it is for Istio ambient only. */
export function ambientOnlyProblems(text: string, source: string): string[] {
  const lines = text.split("\n");
  return lines.flatMap((line, index) =>
    /^\s*-\s*"?--readiness-required-listener=15008\b/.test(line) && !/ambient only/i.test(lines.slice(Math.max(0, index - 2), index + 1).join("\n"))
      ? [`${source} line ${index + 1}: 15008 is required without "Istio ambient only" beside it: ${line.trim()}`]
      : [],
  );
}
