// The names a named check may not take (src/config/named-check-specs.ts) are every built-in check's (src/readiness/check-results.ts): the two lists, kept apart so that options need nothing from the checks, held together here.
import t from "tap";
import { isReservedCheckName } from "../../src/config/named-check-specs.js";
import { MAINTENANCE_CHECK, SHUTDOWN_CHECK, UPSTREAM_CHECK, listenerCheckName } from "../../src/readiness/check-results.js";

t.test("every built-in check's name is reserved, and an ordinary name is not", async (t) => {
  for (const name of [UPSTREAM_CHECK, SHUTDOWN_CHECK, MAINTENANCE_CHECK, listenerCheckName(15008), listenerCheckName(1), "readyz", "livez", "healthz"]) {
    t.ok(isReservedCheckName(name), `${name} is reserved`);
  }
  for (const name of ["mesh", "istio-agent", "listener", "listener-x", "db"]) t.notOk(isReservedCheckName(name), `${name} is free`);
});
