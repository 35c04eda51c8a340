// With the admin listener's maintenance on, the transition lines never say "reporting ready" while /readyz answers 503 (as for the drain).
import t from "tap";
import { ReadinessCheck } from "../../src/readiness/readiness-check.js";
import { captureLog } from "../helpers/log-capture.js";
import { ManualTimers } from "../helpers/test-doubles.js";

t.test("maintenance on: the listeners are present, the line says other checks fail, naming maintenance first", async (t) => {
  const logs = captureLog();
  const clock = new ManualTimers(1000);
  const drain = { draining: false, maintenance: true as boolean | undefined };
  const readiness = new ReadinessCheck({
    requiredPorts: [15008],
    scanner: { scan: async () => ({ listeningPorts: new Set([15008]), unreadableTables: [] }) },
    log: logs.log,
    ttlMs: 1000,
    clock,
    maintenanceCheck: true,
    drain,
  });
  t.same(readiness.names, ["maintenance", "listener-15008", "shutdown"], "first in check order");
  await readiness.check();
  t.notOk(logs.messages().some((msg) => msg.includes("reporting ready")), logs.messages().join(" | "));
  t.match(logs.records.find((record) => record.msg === "required listeners present; other checks failing"), { failedChecks: ["maintenance"] });
  drain.maintenance = false;
  clock.time += 1000;
  await readiness.check();
  t.match(logs.records.at(-1), { msg: "readiness checks passing; reporting ready", checks: ["maintenance", "listener-15008", "shutdown"] }, "ready once it is off, at the next run");
});
