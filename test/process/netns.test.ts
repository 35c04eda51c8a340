// The real kernel path: the daemon in a fresh network namespace sees a listener appear and go away there.
import { spawnSync } from "node:child_process";
import t from "tap";
import { holdPort, hasPython } from "../helpers/port-holder.js";
import { BUILT_ARTIFACTS, runToExit, spawnDaemon } from "../helpers/spawn-daemon.js";

const REQUIRED = 15008;

function netnsUnavailable(): string | false {
  if (process.platform !== "linux") return "network namespaces are Linux-only";
  if (process.getuid?.() !== 0) return "needs root to create a network namespace";
  if (spawnSync("ip", ["-V"]).status !== 0) return "iproute2 (ip) is not installed";
  if (!hasPython()) return "python3 is not installed";
  const probe = `rp-probe-${process.pid}`;
  if (spawnSync("ip", ["netns", "add", probe]).status !== 0) return "cannot create a network namespace here";
  spawnSync("ip", ["netns", "del", probe]);
  return false;
}

const unavailable = netnsUnavailable();
if (unavailable) t.comment(`skipping the network namespace tests: ${unavailable}`);

for (const artifact of BUILT_ARTIFACTS) {
  t.test(`${artifact.name} in a fresh network namespace`, { skip: unavailable || (!artifact.built && `${artifact.name} is not built`) }, async (t) => {
    const namespace = `rp-test-${process.pid}-${artifact.name}`;
    t.equal(spawnSync("ip", ["netns", "add", namespace]).status, 0, "netns created");
    t.teardown(() => {
      spawnSync("ip", ["netns", "del", namespace]);
    });
    spawnSync("ip", ["-n", namespace, "link", "set", "lo", "up"]);
    const inside = ["ip", "netns", "exec", namespace];
    // TTL 0: every probe reads the tables, so each answer reflects the kernel right then.
    const daemon = await spawnDaemon(t, artifact.command, ["--readiness-required-listener", String(REQUIRED), "--readiness-cache-ttl", "0s"], {
      wrapper: inside,
    });
    const probe = async () => {
      const script = `fetch("http://127.0.0.1:${daemon.port}/readyz").then(async (r) => console.log(r.status, await r.text()))`;
      const result = await runToExit([...inside, process.execPath, "-e", script]);
      return result.stdout.trim();
    };
    t.equal(await probe(), `503 {"status":"not ready","missingListeners":[${REQUIRED}],"failedChecks":["listener-${REQUIRED}"]}`, "nothing listens yet");
    const holder = await holdPort(t, { family: 6, port: REQUIRED, wrapper: inside });
    t.equal(await probe(), `503 {"status":"not ready","missingListeners":[${REQUIRED}],"failedChecks":["listener-${REQUIRED}"]}`, "bound but not listening");
    await holder.listen();
    t.equal(await probe(), '200 {"status":"ready"}', "a [::] listener (tcp6 only) satisfies it");
    await holder.close();
    t.equal(await probe(), `503 {"status":"not ready","missingListeners":[${REQUIRED}],"failedChecks":["listener-${REQUIRED}"]}`, "gone again");
    const states = daemon.records.filter((record) => String(record.msg).startsWith("required listeners")).map((record) => record.msg);
    t.same(states, [
      "required listeners missing; reporting not ready",
      "required listeners present; reporting ready",
      "required listeners missing; reporting not ready",
    ]);
    daemon.child.kill("SIGTERM");
    t.equal(await daemon.exited, 0);
  });
}
