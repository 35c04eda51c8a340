// The examples a new user runs first, run as written against the built binary (free ports for this machine): README's entrypoint command, its Kubernetes snippet and deployment-entrypoint.yaml's args each become ready. The manifests themselves play under podman in test/image/app-image.test.ts.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import t, { type Test } from "tap";
import { parse, parseAllDocuments } from "yaml";
import { send } from "../helpers/http-client.js";
import { BINARY, spawnDaemon } from "../helpers/spawn-daemon.js";
import { closedPort } from "../helpers/test-doubles.js";

const root = join(import.meta.dirname, "../..");
const readme = readFileSync(join(root, "README.md"), "utf8");
const skip = !existsSync(BINARY) && "dist/readiness-proxy is not built: run make build";

/** The README's first ```sh block after `heading`, its continuation lines joined, as argv. */
function shCommand(heading: string): string[] {
  const block = /```sh\n([\s\S]*?)\n```/.exec(readme.slice(readme.indexOf(heading)))![1]!;
  return block.replace(/\\\n\s*/g, " ").trim().split(/\s+/);
}

/** A container's args without the lines whose comment says "Istio ambient only" (nothing listens on 15008 here, as the comment says). */
function argsWithoutAmbient(yamlText: string, args: readonly string[]): string[] {
  const ambient = yamlText.split("\n").some((line, index, lines) => /Istio ambient only/.test(line) || /Istio ambient only/.test(lines[index - 1] ?? ""));
  return ambient ? args.filter((arg) => arg !== "--readiness-required-listener=15008") : [...args];
}

/** Runs the binary with `args` (8000 moved to a free port, listeners on loopback) and waits, bounded, for /readyz 200. */
async function becomesReady(t: Test, args: readonly string[]): Promise<void> {
  const appPort = await closedPort();
  const moved = args.map((arg) => arg.replace(/^8000$/, String(appPort)).replace("127.0.0.1:8000", `127.0.0.1:${appPort}`).replace(/^--metrics-listen=:9090$/, "--metrics-listen=127.0.0.1:0").replace(/^--listen=:8080$/, "--listen=127.0.0.1:0"));
  const daemon = await spawnDaemon(t, [BINARY], ["--readiness-cache-ttl", "0s", ...moved]);
  t.teardown(() => {
    if (daemon.child.exitCode === null) daemon.child.kill("SIGTERM");
    return daemon.exited.then(() => undefined);
  });
  let last = "";
  // Bounded: 400 probes 25 ms apart, for python to start and listen.
  for (let probe = 0; probe < 400; probe++) {
    const reply = await send(daemon.port, "/readyz?verbose");
    last = reply.text();
    if (reply.status === 200) break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  t.match(last, /readyz check passed\n$/, `ready as written:\n${last}`);
}

t.test("README's entrypoint command becomes ready", { skip }, async (t) => {
  const command = shCommand("## The entrypoint form");
  t.equal(command[0], "readiness-proxy");
  await becomesReady(t, command.slice(1));
});

t.test("README's Kubernetes snippet becomes ready (its Istio-ambient-only line deleted, as it says)", { skip }, async (t) => {
  const text = /```yaml\n([\s\S]*?)\n```/.exec(readme.slice(readme.indexOf("\n## Kubernetes\n")))![1]!;
  const container = (parse(text) as { containers: Array<{ args: string[] }> }).containers[0]!;
  await becomesReady(t, argsWithoutAmbient(text, container.args.map(String)));
});

t.test("docs/deploy/deployment-entrypoint.yaml's args become ready (its Istio-ambient-only line deleted, as it says)", { skip }, async (t) => {
  const text = readFileSync(join(root, "docs/deploy/deployment-entrypoint.yaml"), "utf8");
  const deployment = parseAllDocuments(text).map((doc) => doc.toJS() as { kind: string; spec: { template: { spec: { containers: Array<{ args: string[] }> } } } }).find((doc) => doc.kind === "Deployment")!;
  const container = deployment.spec.template.spec.containers[0]!;
  await becomesReady(t, argsWithoutAmbient(text, container.args.map(String)));
});
