// The shipped deployment examples: the Kubernetes YAML parses and probes the right paths; the Dockerfiles' shape and inputs hold.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import t, { type Test } from "tap";
import { parseAllDocuments } from "yaml";
import { parseCommandLine } from "../../src/cli.js";

const root = join(import.meta.dirname, "../..");

interface Container {
  name: string;
  args?: string[];
  restartPolicy?: string;
  ports?: Array<{ name: string; containerPort: number }>;
  startupProbe?: { httpGet: { path: string; port: string } };
  readinessProbe?: { httpGet: { path: string; port: string } };
  livenessProbe?: { httpGet: { path: string; port: string } };
  lifecycle?: { preStop?: { sleep?: { seconds: number } } };
}

/** The Deployment and Service of a manifest, every document free of YAML errors. */
function readManifest(t: Test, file: string) {
  const documents = parseAllDocuments(readFileSync(join(root, "docs/deploy", file), "utf8"));
  for (const document of documents) t.same(document.errors, [], "no YAML errors");
  const [deployment, service] = documents.map((document) => document.toJS() as Record<string, any>);
  t.equal(deployment?.kind, "Deployment");
  t.equal(service?.kind, "Service");
  t.equal(service?.spec.ports[0].targetPort, "http");
  return { deployment, pod: deployment?.spec.template.spec, service };
}

/** The proxy's own flags (before any `--`) as the program parses them: the manifest must be valid input. */
function configOf(t: Test, args: string[]) {
  const commandLine = parseCommandLine(args, {}, { writeOut: () => {}, writeErr: (text) => t.fail(text) });
  if (commandLine.action !== "run") throw new Error(`the manifest's args are refused: ${args.join(" ")}`);
  return commandLine.config;
}

function checkProbes(t: Test, proxy: Container) {
  t.ok(proxy.args?.includes("--readiness-required-listener=15008"));
  t.same(proxy.readinessProbe?.httpGet, { path: "/readyz", port: "http" });
  t.same(proxy.livenessProbe?.httpGet, { path: "/health", port: "http" });
  t.equal(proxy.ports?.[0]?.containerPort, 8080);
}

t.test("deployment-entrypoint.yaml: one container runs proxy and app; the grace period outlasts the whole stop", async (t) => {
  const { pod } = readManifest(t, "deployment-entrypoint.yaml");
  const containers = pod.containers as Container[];
  t.equal(containers.length, 1);
  const proxy = containers[0]!;
  checkProbes(t, proxy);
  const config = configOf(t, proxy.args!);
  t.same(config.appCommand, ["python3", "-m", "http.server", "8000", "--bind", "127.0.0.1"]);
  const budgetMs = config.shutdownDelayMs + config.shutdownTimeoutMs + config.appStopTimeoutMs;
  t.ok(pod.terminationGracePeriodSeconds * 1000 > budgetMs, `grace period ${pod.terminationGracePeriodSeconds}s > ${budgetMs / 1000}s`);
});

t.test("deployment-sidecar.yaml: a native sidecar whose startup probe is /healthz, the app with a preStop sleep", async (t) => {
  const { pod } = readManifest(t, "deployment-sidecar.yaml");
  const proxy = (pod.initContainers as Container[]).find((container) => container.name === "readiness-proxy")!;
  t.equal(proxy.restartPolicy, "Always", "a native sidecar (Kubernetes 1.29+)");
  checkProbes(t, proxy);
  t.same(proxy.startupProbe?.httpGet, { path: "/healthz", port: "http" }, "never /readyz: the app starts only after it passes");
  const config = configOf(t, proxy.args!);
  t.same(config.appCommand, [], "the sidecar form runs no app");
  const app = (pod.containers as Container[]).find((container) => container.name === "app")!;
  const sleep = app.lifecycle?.preStop?.sleep?.seconds ?? 0;
  t.ok(sleep > 0, "the app keeps serving while endpoints drop it");
  t.ok(pod.terminationGracePeriodSeconds * 1000 > sleep * 1000 + config.shutdownDelayMs + config.shutdownTimeoutMs);
});

/** A Dockerfile's instructions, continuation lines joined and comments dropped. */
function instructionsOf(file: string): string[] {
  return readFileSync(join(root, "docs/deploy", file), "utf8")
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
}

t.test("Dockerfile: multi-stage, non-root, tini as PID 1 over the binary, every copied file exists", async (t) => {
  const instructions = instructionsOf("Dockerfile");
  const from = instructions.filter((line) => line.startsWith("FROM "));
  t.equal(from.length, 2, "a build stage and a runtime stage");
  t.match(from[1], /distroless|slim/, "a minimal runtime base");
  t.ok(instructions.includes("USER nonroot"), "runs as non-root");
  t.ok(instructions.includes('ENTRYPOINT ["/tini", "--", "/readiness-proxy"]'), "tini reaps zombies and signals the proxy alone (no -g)");
  for (const line of instructions.filter((entry) => entry.startsWith("COPY ") && !entry.includes("--from="))) {
    const sources = line.split(/\s+/).slice(1, -1);
    for (const source of sources) t.ok(existsSync(join(root, source)), `COPY source ${source} exists`);
  }
  const copiedFromBuild = instructions.filter((line) => line.includes("--from=build"));
  t.ok(copiedFromBuild.some((line) => /^COPY --from=build \/readiness-proxy \/readiness-proxy$/.test(line)), "ships the binary the build stage made");
  t.ok(copiedFromBuild.some((line) => /\/usr\/bin\/tini-static \/tini$/.test(line)), "Debian's static tini");
});

t.test("Dockerfile: both platforms, cross-built natively, TARGETARCH picking the binary and tini", async (t) => {
  const instructions = instructionsOf("Dockerfile");
  t.match(instructions.find((line) => line.startsWith("FROM ")), /^FROM --platform=\$BUILDPLATFORM /, "the build stage never runs emulated");
  t.ok(instructions.includes("ARG TARGETARCH"));
  const install = instructions.find((line) => line.includes("apt-get install"))!;
  t.match(install, /apt-get download "tini:\$TARGETARCH"/, "tini of the target's architecture");
  // What the Makefile's cross-tools-<arch> installs for either target.
  for (const pkg of ["make", "qemu-user-static", "binutils-x86-64-linux-gnu", "binutils-aarch64-linux-gnu", "libc6-arm64-cross", "libstdc++6-arm64-cross", "libc6-amd64-cross", "libstdc++6-amd64-cross"]) {
    t.match(install, new RegExp(`\\s${pkg.replace(/\+/g, "\\+")}(\\s|$)`), `installs ${pkg}`);
  }
  const build = instructions.find((line) => line.includes("make \"dist/readiness-proxy-linux-$arch\""));
  t.ok(build, "makes the target's release binary");
  t.match(build, /\[ "\$TARGETARCH" = amd64 \] && echo x64/, "Docker's amd64 is Node's x64");
  t.match(readFileSync(join(root, "Makefile"), "utf8"), /^dist\/readiness-proxy-linux-%:/m, "the Makefile has that target");
});

t.test("app-entrypoint.Dockerfile: the app's image runs tini, then readiness-proxy, then the app after --", async (t) => {
  const instructions = instructionsOf("app-entrypoint.Dockerfile");
  const entrypoint = JSON.parse(instructions.find((line) => line.startsWith("ENTRYPOINT "))!.slice("ENTRYPOINT ".length)) as string[];
  t.same(entrypoint.slice(0, 3), ["tini", "--", "readiness-proxy"]);
  t.equal(entrypoint.at(-1), "--", "CMD is the app's command line");
  t.same(configOf(t, entrypoint.slice(3, -1)).appCommand, []);
  const cmd = JSON.parse(instructions.find((line) => line.startsWith("CMD "))!.slice("CMD ".length)) as string[];
  t.same(cmd.slice(0, 3), ["python3", "-m", "http.server"]);
});
