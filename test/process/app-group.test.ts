// The entrypoint form's SIGKILL after --app-stop-timeout goes to the app's whole process group: a worker the app started does not outlive it.
import { readFileSync } from "node:fs";
import t from "tap";
import { BUILT_ARTIFACTS, spawnDaemon } from "../helpers/spawn-daemon.js";
import { closedPort } from "../helpers/test-doubles.js";

// Starts a worker (a grandchild of the proxy, in the app's group), reports it, and ignores SIGTERM, so only SIGKILL ends it.
const APP = `
const { spawn } = require("node:child_process");
const worker = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
// The handler goes in before the report: the test sends SIGTERM as soon as it reads the report.
process.on("SIGTERM", () => process.stdout.write(JSON.stringify({ msg: "app ignores SIGTERM" }) + "\\n"));
process.stdout.write(JSON.stringify({ msg: "worker started", pid: worker.pid }) + "\\n");
setInterval(() => {}, 1000);
`;

/** Running: the process exists and is not a zombie waiting for init to reap it. */
function isRunning(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z /s.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

for (const artifact of BUILT_ARTIFACTS) {
  t.test(`${artifact.name}: the stop timeout's SIGKILL ends the app's worker too`, { skip: !artifact.built && `${artifact.name} is not built: run make build` }, async (t) => {
    const argv = ["--upstream", `http://127.0.0.1:${await closedPort()}`, "--app-stop-timeout", "200ms", "--readiness-upstream-listener", "off", "--", process.execPath, "-e", APP];
    const daemon = await spawnDaemon(t, artifact.command, argv);
    const worker = Number((await daemon.waitForLog("worker started")).pid);
    t.teardown(() => {
      if (isRunning(worker)) process.kill(worker, "SIGKILL");
    });
    t.ok(isRunning(worker));
    daemon.child.kill("SIGTERM");
    await daemon.waitForLog("app ignores SIGTERM");
    t.equal(await daemon.exited, 137, "the app's SIGKILL: 128 + 9");
    // SIGKILL to a group is sent to all its members at once; the worker's exit may trail the app's by a moment.
    const deadline = Date.now() + 5_000;
    while (isRunning(worker) && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
    t.notOk(isRunning(worker), "the worker, in the app's group, was killed with it");
  });
}
