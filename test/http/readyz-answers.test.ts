// /readyz's three forms compared byte for byte over a table of reports: JSON, kube-style verbose with excludes, and per-check text.
import t from "tap";
import { evaluate, parseReadyzQuery, readyzJson, readyzVerbose, singleCheckText } from "../../src/http/readyz-answers.js";
import { listenerResults, type ReadinessReport } from "../../src/readiness/check-results.js";
import type { Verdict } from "../../src/readiness/verdict.js";

function report(verdict: Verdict, upstream?: { ok: true } | { ok: false; reason: string }): ReadinessReport {
  const checks = listenerResults(verdict);
  if (upstream) checks.push(upstream.ok ? { name: "upstream", ok: true } : { name: "upstream", ok: false, reason: upstream.reason });
  return { verdict, checks };
}

const present: Verdict = { state: "present", ready: true, ports: [8000, 15008] };
const missing: Verdict = { state: "missing", ready: false, ports: [8000, 15008], missing: [15008] };
const notEnforced: Verdict = { state: "not enforced", ready: true, ports: [15008], unreadableTables: ["tcp"] };
const nothing: Verdict = { state: "present", ready: true, ports: [] };

t.test("a healthy pod", async (t) => {
  const evaluation = evaluate(report(present, { ok: true }), { draining: false });
  t.equal(readyzJson(report(present), evaluation), '{"status":"ready"}');
  t.equal(readyzVerbose(evaluation), "[+]listener-8000 ok\n[+]listener-15008 ok\n[+]upstream ok\n[+]shutdown ok\nreadyz check passed\n");
});

t.test("a failing pod: the mesh port missing, the app answering 500", async (t) => {
  const failing = report(missing, { ok: false, reason: "status 500" });
  const evaluation = evaluate(failing, { draining: false });
  t.equal(readyzJson(failing, evaluation), '{"status":"not ready","missingListeners":[15008],"failedChecks":["listener-15008","upstream"]}');
  t.equal(
    readyzVerbose(evaluation),
    "[+]listener-8000 ok\n[-]listener-15008 failed: not listening\n[-]upstream failed: status 500\n[+]shutdown ok\nreadyz check failed\n",
  );
});

t.test("draining", async (t) => {
  const evaluation = evaluate(report(nothing), { draining: true });
  t.equal(readyzJson(report(nothing), evaluation), '{"status":"not ready","draining":true,"failedChecks":["shutdown"]}');
  t.equal(readyzVerbose(evaluation), "[-]shutdown failed: draining\nreadyz check failed\n");
  const both = evaluate(report(missing), { draining: true });
  t.equal(readyzJson(report(missing), both), '{"status":"not ready","missingListeners":[15008],"draining":true,"failedChecks":["listener-15008","shutdown"]}');
});

t.test("fail open: ok, with the reason it is not enforced", async (t) => {
  const evaluation = evaluate(report(notEnforced), { draining: false });
  t.equal(readyzJson(report(notEnforced), evaluation), '{"status":"ready"}');
  t.equal(readyzVerbose(evaluation), "[+]listener-15008 ok (not enforced: socket table unreadable)\n[+]shutdown ok\nreadyz check passed\n");
});

t.test("exclude: the check does not count; an unknown name adds the warn line and nothing else", async (t) => {
  const failing = report(missing, { ok: false, reason: "timeout after 1s" });
  const excluded = evaluate(failing, { draining: false }, ["listener-15008", "upstream"]);
  t.equal(excluded.ready, true);
  t.equal(readyzJson(failing, excluded), '{"status":"ready"}');
  t.equal(
    readyzVerbose(excluded),
    "[+]listener-8000 ok\n[+]listener-15008 excluded: ok\n[+]upstream excluded: ok\n[+]shutdown ok\nreadyz check passed\n",
  );
  const partly = evaluate(failing, { draining: false }, ["upstream", "nope", "listener-1", "nope"]);
  t.equal(readyzJson(failing, partly), '{"status":"not ready","missingListeners":[15008],"failedChecks":["listener-15008"]}');
  t.equal(
    readyzVerbose(partly),
    '[+]listener-8000 ok\n[-]listener-15008 failed: not listening\n[+]upstream excluded: ok\n[+]shutdown ok\nwarn: some health checks cannot be excluded: no matches for "listener-1","nope"\nreadyz check failed\n',
  );
  t.equal(readyzJson(report(missing), evaluate(report(missing), { draining: true }, ["shutdown"])), '{"status":"not ready","missingListeners":[15008],"failedChecks":["listener-15008"]}');
});

t.test("per-check text", async (t) => {
  t.equal(singleCheckText({ name: "upstream", ok: true }), "ok");
  t.equal(singleCheckText({ name: "upstream", ok: false, reason: "connection refused" }), "upstream failed: connection refused\n");
});

t.test("query parsing: verbose with any value, exclude repeatable, anything else asks for nothing", async (t) => {
  t.equal(parseReadyzQuery("/readyz"), undefined);
  t.equal(parseReadyzQuery("/readyz?x=1"), undefined);
  t.same(parseReadyzQuery("/readyz?verbose"), { verbose: true, exclude: [] });
  t.same(parseReadyzQuery("/readyz?verbose=false"), { verbose: true, exclude: [] }, "the key present, any value");
  t.same(parseReadyzQuery("/readyz?exclude=upstream&exclude=%20shutdown&exclude="), { verbose: false, exclude: ["upstream", "shutdown"] });
});
