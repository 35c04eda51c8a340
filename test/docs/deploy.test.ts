// The shipped deployment examples: the Kubernetes YAML parses and probes the right paths; the Dockerfiles agree with make image and the manifests; the package pins are well formed.
import { spawnSync } from "node:child_process";
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
  lifecycle?: { preStop?: { sleep?: { seconds: number }; httpGet?: { path: string; port: number | string }; exec?: { command: string[] } } };
}

/** The Deployment and Service of a manifest, every document free of YAML errors. */
function readManifest(t: Test, file: string) {
  const documents = parseAllDocuments(readFileSync(join(root, "docs/deploy", file), "utf8"));
  for (const document of documents) t.same(document.errors, [], "no YAML errors");
  const [deployment, service] = documents.map((document) => document.toJS() as Record<string, any>);
  t.equal(deployment?.kind, "Deployment");
  t.equal(service?.kind, "Service");
  // Where it points is manifest-rules.test.ts's business: a regular container's named port, or the proxy's number.
  t.equal(service?.spec.ports[0].port, 80);
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

t.test("deployment-sidecar.yaml: a native sidecar that holds the app until the mesh listens and drains in its preStop, the app waiting for it in its own", async (t) => {
  const { pod, service } = readManifest(t, "deployment-sidecar.yaml");
  const proxy = (pod.initContainers as Container[]).find((container) => container.name === "readiness-proxy")!;
  t.equal(proxy.restartPolicy, "Always", "a native sidecar (Kubernetes 1.29+)");
  checkProbes(t, proxy);
  t.same(proxy.startupProbe?.httpGet, { path: "/readyz/listener-15008", port: "http" }, "one check, never /readyz: the app starts only after it passes");
  const config = configOf(t, proxy.args!);
  t.same(config.appCommand, [], "the sidecar form runs no app");
  t.ok(config.requiredPorts.includes(15008), "the startup probe's check exists");
  t.equal(service?.spec.ports[0].targetPort, 8080, "by number: Services do not resolve a sidecar's named ports (kubernetes#127958)");
  const app = (pod.containers as Container[]).find((container) => container.name === "app")!;
  t.same(app.lifecycle?.preStop, { httpGet: { path: "/wait-for-drain", port: 8080 } }, "the app keeps serving until the sidecar's drain is done");
  t.ok(config.shutdownDelayMs > 0, "the drain keeps serving while endpoints drop the pod");
  // The rest of the hooks and the budget: test/docs/manifest-rules.test.ts.
  t.ok(pod.terminationGracePeriodSeconds * 1000 > config.shutdownDelayMs + config.shutdownTimeoutMs);
});

/** A Dockerfile's instructions, continuation lines joined and comments dropped. */
function instructionsOf(file: string): string[] {
  return readFileSync(join(root, "docs/deploy", file), "utf8")
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
}

/** The image config make image writes (docs/deploy/image/build-image.mjs config). */
function imageConfig(): { User: string; Env: string[]; Entrypoint: string[]; ExposedPorts: Record<string, object>; Labels: Record<string, string> } {
  const result = spawnSync(process.execPath, [join(root, "docs/deploy/image/build-image.mjs"), "config"], { encoding: "utf8" });
  if (result.status !== 0) throw new Error(result.stderr);
  return JSON.parse(result.stdout);
}

t.test("Dockerfile: FROM scratch, copying what make image prepares, with make image's config", async (t) => {
  const instructions = instructionsOf("Dockerfile");
  t.same(instructions.filter((line) => line.startsWith("FROM ")), ["FROM scratch"], "no base image");
  t.same(instructions.filter((line) => /^RUN /.test(line)), [], "nothing runs in the build (no emulation for another platform)");
  t.ok(instructions.includes("ARG TARGETARCH"));
  const copies = instructions.filter((line) => line.startsWith("COPY "));
  t.same(copies, ["COPY dist/image/${TARGETARCH}/rootfs/ /", "COPY dist/image/${TARGETARCH}/readiness-proxy /readiness-proxy"], "the tree, then the binary: make image's two layers");
  t.match(readFileSync(join(root, "Makefile"), "utf8"), /^dist\/readiness-proxy-image-linux-%\.tar: dist\/readiness-proxy-linux-% /m, "make image builds each architecture's image from its release binary");
  for (const arch of ["amd64", "arm64"]) {
    const prepared = join(root, "dist/image", arch);
    if (!existsSync(prepared)) {
      t.comment(`dist/image/${arch}/ is not there (make image makes it): its COPY sources not checked`);
      continue;
    }
    for (const source of ["rootfs/tini", "rootfs/etc/passwd", "readiness-proxy"]) t.ok(existsSync(join(prepared, source)), `dist/image/${arch}/${source} exists`);
  }
  const config = imageConfig();
  t.ok(instructions.includes(`USER ${config.User}`), `USER ${config.User}: numeric, so runAsNonRoot can verify it`);
  t.ok(instructions.includes(`ENTRYPOINT ${JSON.stringify(config.Entrypoint).replace(/","/g, '", "')}`), "tini reaps zombies and signals the proxy alone (no -g)");
  t.same(config.Entrypoint, ["/tini", "--", "/readiness-proxy"]);
  t.same(instructions.filter((line) => line.startsWith("ENV ")), config.Env.map((pair) => `ENV ${pair}`));
  t.same(instructions.filter((line) => line.startsWith("EXPOSE ")), Object.keys(config.ExposedPorts).map((port) => `EXPOSE ${port.replace("/tcp", "")}`));
  const labelLine = instructions.find((line) => line.startsWith("LABEL "))!;
  const labels = Object.fromEntries([...labelLine.matchAll(/([\w.]+)="([^"]*)"/g)].map((match) => [match[1], match[2]]));
  const args = Object.fromEntries(instructions.filter((line) => line.startsWith("ARG ")).map((line) => line.slice(4).split("=") as [string, string?]));
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
  t.equal(args.VERSION, pkg.version, "ARG VERSION defaults to package.json's");
  t.same(labels, {
    "org.opencontainers.image.source": "${SOURCE}",
    "org.opencontainers.image.version": "${VERSION}",
    "org.opencontainers.image.revision": "${REVISION}",
    "org.opencontainers.image.title": config.Labels["org.opencontainers.image.title"],
    "org.opencontainers.image.description": config.Labels["org.opencontainers.image.description"],
    "org.opencontainers.image.licenses": config.Labels["org.opencontainers.image.licenses"],
  });
});

t.test("image/packages.lock: each package pinned once per architecture, with its version and sha256", async (t) => {
  const pins = readFileSync(join(root, "docs/deploy/image/packages.lock"), "utf8")
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => line.split(" "));
  for (const pin of pins) t.match(pin, [/^(amd64|arm64)$/, /^[a-z0-9.+-]+$/, /^[\w.+:~-]+$/, /^[0-9a-f]{64}$/], pin.join(" "));
  const namesOf = (arch: string) => pins.filter(([pinArch]) => pinArch === arch).map(([, name]) => name!);
  t.same(namesOf("arm64"), namesOf("amd64"), "the same packages for both");
  t.same(new Set(namesOf("amd64")).size, namesOf("amd64").length, "each once");
  for (const name of ["libc6", "libstdc++6", "libgcc-s1", "tini"]) t.ok(namesOf("amd64").includes(name), `${name}: what the runtime links, and tini`);
  t.match(readFileSync(join(root, "Makefile"), "utf8"), /^image-lock:/m, "make image-lock refreshes them");
});

t.test("app-entrypoint.Dockerfile: the app's image runs tini, then readiness-proxy; CMD is its flags, then the app after --", async (t) => {
  const instructions = instructionsOf("app-entrypoint.Dockerfile");
  const entrypoint = JSON.parse(instructions.find((line) => line.startsWith("ENTRYPOINT "))!.slice("ENTRYPOINT ".length)) as string[];
  t.same(entrypoint, ["tini", "--", "readiness-proxy"], "so a pod's args (deployment-entrypoint.yaml) are the proxy's flags, then the app");
  const cmd = JSON.parse(instructions.find((line) => line.startsWith("CMD "))!.slice("CMD ".length)) as string[];
  t.same(configOf(t, cmd).appCommand, ["python3", "-m", "http.server", "8000", "--bind", "127.0.0.1"]);
  t.ok(instructions.includes("USER 65532"));
});
