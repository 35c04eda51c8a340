// The npm entry (bin/readiness-proxy): the bundle under whatever node is on PATH, error pages found beside it.
import { execFileSync } from "node:child_process";
import { accessSync, constants, realpathSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import t from "tap";
import { send } from "../helpers/http-client.js";
import { BUILT_ARTIFACTS, runToExit, spawnDaemon } from "../helpers/spawn-daemon.js";
import { closedPort } from "../helpers/test-doubles.js";

const launcher = join(import.meta.dirname, "../../bin/readiness-proxy");
const bundle = BUILT_ARTIFACTS.find((artifact) => artifact.name === "bundle")!;
/** package.json's engines: the oldest node the npm entry promises to run on. */
const OLDEST = [20, 12];

/** The first `node` on PATH that is not this runtime (node_modules/.bin/node is this one, linked). */
function machineNode(): string | undefined {
  const self = realpathSync(process.execPath);
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const candidate = join(dir, "node");
    try {
      accessSync(candidate, constants.X_OK);
      if (realpathSync(candidate) !== self) return candidate;
    } catch {
      // Not here: the next directory.
    }
  }
  return undefined;
}

/** Why a node cannot stand for an npm user's, or false when it can. */
function unfit(node: string | undefined): string | false {
  if (node === undefined) return "no node on PATH besides the runtime the tests run on";
  const [major = 0, minor = 0] = execFileSync(node, ["-p", "process.versions.node"], { encoding: "utf8" }).split(".").map(Number);
  if (major < OLDEST[0]! || (major === OLDEST[0] && minor < OLDEST[1]!)) return `${node} is older than package.json's engines (>=${OLDEST.join(".")})`;
  return false;
}

const machine = machineNode();
// The tests run on the binary's runtime; the machine's node (20 here) stands for an npm user on an
// older one that package.json's engines still allow.
const runtimes = [
  { name: "the runtime the tests run on", node: process.execPath, skip: false as string | false },
  { name: `the machine's node (${machine ?? "none"})`, node: machine ?? "", skip: unfit(machine) },
];

for (const runtime of runtimes) {
  t.test(`bin/readiness-proxy runs the bundle, under ${runtime.name}`, { skip: (!bundle.built && "the bundle is not built: run make build") || runtime.skip }, async (t) => {
    // Executed as a user would, through its #!/usr/bin/env node line, with that node first on
    // PATH. tap adds its loaders to every child's NODE_OPTIONS; `env -u` keeps them out of it.
    const env = { PATH: `${dirname(runtime.node)}:${process.env.PATH ?? ""}` };
    const command = ["env", "-u", "NODE_OPTIONS", launcher];
    const nodeVersion = (await runToExit([runtime.node, "--version"])).stdout.trim();
    const version = await runToExit([...command, "--version"], env);
    t.equal(version.stdout, `readiness-proxy 0.1.0 (node ${nodeVersion}, linux-${process.arch})\n`);
    const daemon = await spawnDaemon(t, command, ["--upstream", `http://127.0.0.1:${await closedPort()}`], { env });
    t.equal((await send(daemon.port, "/healthz")).text(), '{"status":"ok"}');
    const page = await send(daemon.port, "/", { headers: { accept: "text/html" } });
    t.equal(page.status, 502);
    t.match(page.text(), /Upstream unavailable/, "the page template is found beside the bundle");
  });
}
