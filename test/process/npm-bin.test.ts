// The npm entry (bin/readiness-proxy): the bundle under whatever node is on PATH, error pages found beside it.
import { dirname, join } from "node:path";
import t from "tap";
import { send } from "../helpers/http-client.js";
import { BUILT_ARTIFACTS, runToExit, spawnDaemon } from "../helpers/spawn-daemon.js";
import { closedPort } from "../helpers/test-doubles.js";

const launcher = join(import.meta.dirname, "../../bin/readiness-proxy");
const bundle = BUILT_ARTIFACTS.find((artifact) => artifact.name === "bundle")!;

t.test("bin/readiness-proxy runs the bundle", { skip: !bundle.built && "the bundle is not built: run make build" }, async (t) => {
  // Executed as a user would, through its #!/usr/bin/env node line, with this node first on
  // PATH. tap adds its loaders to every child's NODE_OPTIONS; `env -u` keeps them out of it.
  const env = { PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}` };
  const command = ["env", "-u", "NODE_OPTIONS", launcher];
  const version = await runToExit([...command, "--version"], env);
  t.equal(version.stdout, `readiness-proxy 0.1.0 (node ${process.version}, linux-${process.arch})\n`);
  const daemon = await spawnDaemon(t, command, ["--upstream", `http://127.0.0.1:${await closedPort()}`], { env });
  t.equal((await send(daemon.port, "/healthz")).text(), '{"status":"ok"}');
  const page = await send(daemon.port, "/", { headers: { accept: "text/html" } });
  t.equal(page.status, 502);
  t.match(page.text(), /Upstream unavailable/, "the page template is found beside the bundle");
});
