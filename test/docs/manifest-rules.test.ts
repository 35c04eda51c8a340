// Every manifest under docs/deploy/ and README.md's Kubernetes snippet pass Pod Security "restricted", resolve their Service and PodMonitor ports, and fit probes and the proxy's stop into the shutdown delay and grace period; the rules themselves catch the mistakes they exist for.
import t from "tap";
import { parse } from "yaml";
import { deployObjects, kubernetesMdJobs, podsOf, readmePod, type KubeObject, type SourcedObject } from "./manifests.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ambientOnlyProblems, containerLimitProblems, drainHookProblems, podSecurityProblems, portProblems, readinessProblems, timingProblems } from "./manifest-rules.js";

const shipped = deployObjects();
const pods = [...podsOf(shipped), ...podsOf([readmePod()])];

t.test("the docs define the pods the rules read", async (t) => {
  t.same(
    pods.map((pod) => pod.source),
    ["docs/deploy/deployment-entrypoint.yaml Deployment/model-server", "docs/deploy/deployment-grpc.yaml Deployment/grpc-server", "docs/deploy/deployment-sidecar.yaml Deployment/model-server", "README.md Kubernetes snippet"],
  );
});

for (const pod of pods) {
  t.test(pod.source, async (t) => {
    t.same(podSecurityProblems(pod.spec), [], 'Pod Security "restricted"');
    t.same(containerLimitProblems(pod.spec), [], "read-only root and a memory limit on every container");
    t.same(timingProblems(pod.spec), [], "probes fit the shutdown delay; the whole stop and a margin fit the grace period");
    t.same(readinessProblems(pod.spec), [], "/readyz waits for the app: its port, or its health");
    t.same(drainHookProblems(pod.spec), [], "the native sidecar form's drain hooks are whole (or absent)");
  });
}

t.test("docs/kubernetes.md's Jobs: Istio's and Linkerd's, restricted, limited, their stop within the grace period", async (t) => {
  const jobs = podsOf(kubernetesMdJobs());
  t.same(jobs.map((pod) => pod.source), ["docs/kubernetes.md Job 1/nightly-report", "docs/kubernetes.md Job 2/nightly-report"]);
  for (const pod of jobs) {
    t.same(podSecurityProblems(pod.spec), [], `${pod.source}: Pod Security "restricted"`);
    t.same(containerLimitProblems(pod.spec), [], `${pod.source}: read-only root and a memory limit`);
    t.same(timingProblems(pod.spec), [], `${pod.source}: the stop fits the grace period`);
  }
});

t.test("every required 15008 says at its line that it is for Istio ambient only (without ambient no pod ever becomes ready)", async (t) => {
  const root = join(import.meta.dirname, "../..");
  for (const file of ["docs/deploy/deployment-entrypoint.yaml", "docs/deploy/deployment-grpc.yaml", "docs/deploy/deployment-sidecar.yaml", "README.md", "docs/kubernetes.md"]) {
    t.same(ambientOnlyProblems(readFileSync(join(root, file), "utf8"), file), [], file);
  }
  t.same(ambientOnlyProblems("args:\n  # the mesh\n  - --readiness-required-listener=15008\n", "x"), ['x line 3: 15008 is required without "Istio ambient only" beside it: - --readiness-required-listener=15008'], "the rule finds an unmarked line");
});

t.test("the shipped native sidecar manifest stops in the order of CONTRACT §14", async (t) => {
  const sidecar = pods.find((pod) => pod.source.startsWith("docs/deploy/deployment-sidecar.yaml"))!.spec;
  const proxy = sidecar.initContainers.find((container: KubeObject) => container.name === "readiness-proxy");
  const app = sidecar.containers.find((container: KubeObject) => container.name === "app");
  t.same(proxy.lifecycle.preStop, { exec: { command: ["/readiness-proxy", "drain"] } }, "the sidecar's preStop begins the drain");
  t.same(app.lifecycle.preStop, { httpGet: { path: "/wait-for-drain", port: 8080 } }, "the app's preStop waits for it");
  t.equal(proxy.startupProbe.httpGet.path, "/readyz/listener-15008", "the app starts once the mesh's port listens");
  // Written beside terminationGracePeriodSeconds: delay + timeout + the app's own stop + margin.
  t.equal(sidecar.terminationGracePeriodSeconds, 30);
  t.same(timingProblems({ ...sidecar, terminationGracePeriodSeconds: 25 }), ["container readiness-proxy: delay 6s + timeout 10s + app stop 5s + margin 5s = 26s > terminationGracePeriodSeconds 25"], "the budget counts the app's stop after the drain");
});

t.test("Service targetPorts and PodMonitor ports resolve, file by file (each Service selects its own file's pods)", async (t) => {
  const files = new Set(shipped.map(({ source }) => source.split(" ")[0]!));
  const monitors = shipped.filter(({ object }) => object.kind === "PodMonitor");
  for (const file of files) {
    const objects = shipped.filter(({ source, object }) => source.startsWith(`${file} `) && object.kind !== "PodMonitor");
    const filePods = podsOf(objects);
    if (filePods.length === 0) continue;
    // A PodMonitor that selects this file's pods: each of them must declare its port.
    const selecting = monitors.filter(({ object }) => objects.some((candidate) => selects(object, candidate.object)));
    t.same(portProblems([...objects, ...selecting], filePods), [], file);
  }
  t.ok(monitors.length > 0, "docs/deploy/podmonitor.yaml is read");
});

/** Whether a PodMonitor's matchLabels are all on a Deployment's pod template. */
function selects(monitor: KubeObject, workload: KubeObject): boolean {
  const wanted = (monitor as { spec?: { selector?: { matchLabels?: Record<string, string> } } }).spec?.selector?.matchLabels ?? {};
  const labels = (workload as { spec?: { template?: { metadata?: { labels?: Record<string, string> } } } }).spec?.template?.metadata?.labels;
  return labels !== undefined && Object.entries(wanted).every(([key, value]) => labels[key] === value);
}

/** A pod spec in YAML, as a test case writes it. */
const podSpec = (yaml: string) => parse(yaml) as KubeObject;

const GOOD_POD = `
terminationGracePeriodSeconds: 35
securityContext: { runAsNonRoot: true, seccompProfile: { type: RuntimeDefault } }
containers:
  - name: app
    image: registry.example/app:1
    args: [--shutdown-delay=5s, --, app]
    ports: [{ name: http, containerPort: 8080 }]
    readinessProbe: { httpGet: { path: /readyz, port: http }, periodSeconds: 2, failureThreshold: 2 }
    resources: { limits: { memory: 256Mi } }
    securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: [ALL] } }
`;

t.test("the rules find what they exist for", async (t) => {
  const good = podSpec(GOOD_POD);
  t.same([...podSecurityProblems(good), ...containerLimitProblems(good), ...timingProblems(good)], [], "the good pod passes");
  const cases: Array<[string, (pod: KubeObject) => void, (pod: KubeObject) => string[], RegExp]> = [
    ["no seccomp profile", (pod) => delete pod.securityContext.seccompProfile, podSecurityProblems, /seccompProfile unset/],
    ["Unconfined seccomp on the container", (pod) => (pod.containers[0].securityContext.seccompProfile = { type: "Unconfined" }), podSecurityProblems, /seccompProfile Unconfined/],
    ["root allowed", (pod) => delete pod.securityContext.runAsNonRoot, podSecurityProblems, /runAsNonRoot/],
    ["privilege escalation", (pod) => delete pod.containers[0].securityContext.allowPrivilegeEscalation, podSecurityProblems, /allowPrivilegeEscalation/],
    ["capabilities kept", (pod) => (pod.containers[0].securityContext.capabilities = { drop: ["NET_RAW"] }), podSecurityProblems, /drop ALL/],
    ["a capability added", (pod) => (pod.containers[0].securityContext.capabilities.add = ["SYS_ADMIN"]), podSecurityProblems, /adds capability SYS_ADMIN/],
    ["the host's network", (pod) => (pod.hostNetwork = true), podSecurityProblems, /hostNetwork/],
    ["the host's PIDs", (pod) => (pod.hostPID = true), podSecurityProblems, /hostPID/],
    ["the host's IPC", (pod) => (pod.hostIPC = true), podSecurityProblems, /hostIPC/],
    ["a hostPath volume", (pod) => (pod.volumes = [{ name: "proc", hostPath: { path: "/proc" } }]), podSecurityProblems, /volume proc: hostPath/],
    ["a writable root", (pod) => delete pod.containers[0].securityContext.readOnlyRootFilesystem, containerLimitProblems, /readOnlyRootFilesystem/],
    ["no memory limit", (pod) => delete pod.containers[0].resources.limits, containerLimitProblems, /no memory limit/],
    // The README before issue 29: period 2 s with the default failureThreshold 3 against a 5 s delay.
    ["the probe slower than the delay", (pod) => delete pod.containers[0].readinessProbe.failureThreshold, timingProblems, /= 6s > the 5s shutdown delay/],
    // ...and no grace period: 5 + 20 + 5 s is exactly the default 30 s, no margin.
    ["the default grace period", (pod) => delete pod.terminationGracePeriodSeconds, timingProblems, /= 35s > terminationGracePeriodSeconds 30/],
    // The env variables count as the flags do: a 1 s delay from the env is shorter than the 4 s probe.
    ["a delay from the env", (pod) => ((pod.containers[0].args = ["--", "app"]), (pod.containers[0].env = [{ name: "READINESS_PROXY_SHUTDOWN_DELAY", value: "1s" }])), timingProblems, /= 4s > the 1s shutdown delay/],
    ["a timeout from the env", (pod) => (pod.containers[0].env = [{ name: "READINESS_PROXY_SHUTDOWN_TIMEOUT", value: "30s" }]), timingProblems, /timeout 30s .* = 45s > terminationGracePeriodSeconds 35/],
    // deployment-sidecar.yaml before issue 41: the app's port 8000 never required, so ready before the app listened.
    ["a sidecar that waits for nothing of the app", (pod) => ((pod.containers[0].image = "registry.example/readiness-proxy:0.1.0"), (pod.containers[0].args = ["--shutdown-delay=5s"])), readinessProblems, /never waits for the app: require its port 8000/],
    ["a value the proxy refuses, from the env", (pod) => (pod.containers[0].env = [{ name: "READINESS_PROXY_LOG_LEVEL", value: "loud" }]), timingProblems, /refuses its args: error: READINESS_PROXY_LOG_LEVEL:/],
  ];
  cases.push(...drainHookCases());
  for (const [name, breakIt, rule, expected] of cases) {
    const pod = podSpec(GOOD_POD);
    breakIt(pod);
    let found: string;
    try {
      found = rule(pod).join("\n");
    } catch (error) {
      found = String(error);
    }
    t.match(found, expected, name);
  }
});

/** The native sidecar form's hooks, each half of them missing or wrong (on the shipped sidecar pod). */
function drainHookCases(): Array<[string, (pod: KubeObject) => void, (pod: KubeObject) => string[], RegExp]> {
  const sidecarPod = () => structuredClone(pods.find((pod) => pod.source.startsWith("docs/deploy/deployment-sidecar.yaml"))!.spec);
  const proxyOf = (pod: KubeObject) => pod.initContainers[0];
  const appOf = (pod: KubeObject) => pod.containers[0];
  const onSidecar = (breakIt: (pod: KubeObject) => void) => (pod: KubeObject) => {
    Object.keys(pod).forEach((key) => delete pod[key]);
    Object.assign(pod, sidecarPod());
    breakIt(pod);
  };
  return [
    ["the app waits for a drain nobody begins", onSidecar((pod) => delete proxyOf(pod).lifecycle), drainHookProblems, /app: preStop waits for a drain \(\/wait-for-drain\) that no sidecar's preStop/],
    ["the sidecar drains but the app does not wait", onSidecar((pod) => delete appOf(pod).lifecycle), drainHookProblems, /readiness-proxy: preStop drains, but no app container's preStop waits/],
    ["drain without an admin listener", onSidecar((pod) => delete proxyOf(pod).env), drainHookProblems, /drain without --admin-listen/],
    ["drain with no delay", onSidecar((pod) => (proxyOf(pod).args = proxyOf(pod).args.map((arg: string) => (arg.startsWith("--shutdown-delay") ? "--shutdown-delay=0s" : arg)))), drainHookProblems, /--shutdown-delay 0s/],
    ["the hook on a named port", onSidecar((pod) => (appOf(pod).lifecycle.preStop.httpGet.port = "http")), drainHookProblems, /port http is no proxy's --listen port/],
    ["the budget without the app's stop", onSidecar((pod) => (pod.terminationGracePeriodSeconds = 21)), timingProblems, /app stop 5s .* = 26s > terminationGracePeriodSeconds 21/],
  ];
}

t.test("a Service that targets a sidecar's named port, and a PodMonitor port nobody declares, are caught", async (t) => {
  const objects: SourcedObject[] = parse(`
- kind: Deployment
  metadata: { name: d }
  spec:
    template:
      metadata: { labels: { app: x } }
      spec:
        initContainers:
          - { name: proxy, image: registry.example/readiness-proxy:0.1.0, restartPolicy: Always, args: ["--listen=:8080"], ports: [{ name: http, containerPort: 8080 }] }
        containers:
          - { name: app, image: app, ports: [{ name: app, containerPort: 8000 }] }
- { kind: Service, metadata: { name: s }, spec: { selector: { app: x }, ports: [{ port: 80, targetPort: http }] } }
- { kind: Service, metadata: { name: n }, spec: { selector: { app: x }, ports: [{ port: 80, targetPort: 8080 }, { port: 81, targetPort: 7 }] } }
- { kind: PodMonitor, metadata: { name: m }, spec: { selector: { matchLabels: { app: x } }, podMetricsEndpoints: [{ port: metrics }] } }
- { kind: Service, metadata: { name: lost }, spec: { selector: { app: y }, ports: [{ port: 80 }] } }
`).map((object: KubeObject) => ({ source: `${object.kind}/${object.metadata.name}`, object }));
  const problems = portProblems(objects, podsOf(objects));
  t.match(problems, [
    /^Service\/s: targetPort of 80 "http" is no named port of a regular container of Deployment\/d$/,
    /^Service\/n: targetPort of 81 7 is a port nothing in Deployment\/d$/,
    /^PodMonitor\/m: port "metrics" is no named port/,
    /^Service\/lost: targetPort of 80 selects no pod/,
  ]);
  t.equal(problems.length, 4, "the numeric 8080, which the sidecar listens on, resolves");
});
