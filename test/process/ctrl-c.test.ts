// The entrypoint form on a real pseudo-terminal (python3's pty): Ctrl-C reaches the proxy alone, which drains (no 502 during the delay) and only then signals the app; the app runs in its own process group and session.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import t from "tap";
import { send } from "../helpers/http-client.js";
import { hasPython } from "../helpers/port-holder.js";
import { BUILT_ARTIFACTS, spawnDaemon, type SpawnedDaemon } from "../helpers/spawn-daemon.js";
import { closedPort } from "../helpers/test-doubles.js";

const APP = join(import.meta.dirname, "../helpers/recording-app.mjs");
const DRIVER = join(import.meta.dirname, "pty-driver.py");

/** Fields 5, 6 and 4 of /proc/<pid>/stat: process group, session, parent (after the command name, which may hold spaces). */
function processIds(pid: number) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /s, "").split(" ");
  return { ppid: Number(fields[1]), pgrp: Number(fields[2]), session: Number(fields[3]) };
}

const indexOf = (daemon: SpawnedDaemon, msg: string) => daemon.records.findIndex((record) => record.msg === msg);

for (const artifact of BUILT_ARTIFACTS) {
  const skip = (!artifact.built && `${artifact.name} is not built: run make build`) || (!hasPython() && "needs python3 for its pty module");
  t.test(`${artifact.name}: Ctrl-C on a terminal`, { skip }, async (t) => {
    const appPort = await closedPort();
    const argv = ["--upstream", `http://127.0.0.1:${appPort}`, "--shutdown-delay", "2s", "--readiness-cache-ttl", "0s", "--", process.execPath, APP, String(appPort), "serve"];
    // The driver is the terminal: the proxy is its session's foreground process group.
    const daemon = await spawnDaemon(t, artifact.command, argv, { wrapper: ["python3", DRIVER] });
    const appPid = Number((await daemon.waitForLog("app started")).pid);
    await daemon.waitForLog("app listening");
    const app = processIds(appPid);
    const proxy = processIds(app.ppid);
    t.teardown(() => {
      // Only if the test failed half-way: a killed terminal would leave both running (the proxy forwards SIGHUP).
      for (const pid of [-appPid, app.ppid]) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
    });
    t.equal(app.pgrp, appPid, "the app leads a process group of its own");
    t.not(app.session, proxy.session, "in a session of its own: the terminal's signals are not its");
    t.equal(proxy.pgrp, app.ppid, "the proxy leads the terminal's foreground group");
    // Once, or after a check already running when the app began to listen (the warm-up asks readiness between its rounds, and
    // callers share the check in flight): bounded, 200 probes.
    let ready = 0;
    for (let probe = 0; probe < 200 && ready !== 200; probe++) ready = (await send(daemon.port, "/readyz")).status;
    t.equal(ready, 200, "ready once the app listens");

    daemon.child.kill("SIGUSR1"); // the driver types Ctrl-C
    t.match(await daemon.waitForLog("draining"), { reason: "SIGINT" });
    const during = await Promise.all(Array.from({ length: 10 }, (_, index) => send(daemon.port, `/during-${index}`)));
    t.same(
      during.map((reply) => [reply.status, reply.text()]),
      during.map((_, index) => [200, `app /during-${index}`]),
      "every request during the shutdown delay reaches the app: no 502",
    );
    t.equal(indexOf(daemon, "stopping app"), -1, "all answered before the app was told to stop");
    t.equal((await send(daemon.port, "/readyz")).status, 503, "draining");

    const end = await daemon.waitForLog("pty command exited");
    t.same({ code: end.code }, { code: 0 }, "the proxy exits with the app's code");
    const signals = daemon.records.filter((record) => record.msg === "app got signal").map((record) => record.signal);
    t.same(signals, ["SIGINT"], "the app heard one SIGINT: the proxy's, after the drain, not the terminal's");
    const order = ["draining", "stopping app", "app got signal", "app exited", "stopped"].map((msg) => indexOf(daemon, msg));
    t.ok(order.every((index, i) => index >= 0 && (i === 0 || index > order[i - 1]!)), `draining < stopping app < app got signal < app exited < stopped: ${order.join(" < ")}`);
    t.ok(Number(daemon.records[indexOf(daemon, "app got signal")]!.at) >= Number(daemon.records[indexOf(daemon, "draining")]!.time) + 2000, "the app's signal came after the 2 s delay");
  });
}
