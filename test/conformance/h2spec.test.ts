// h2spec, the HTTP/2 conformance suite, against the built binary: all 146 cases on a proxied path (an h2c app behind it) and on /healthz, one assertion per case.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t, { type Test } from "tap";
import { startH2Upstream, type H2Upstream } from "../helpers/h2.js";
import { h2specBinary, runH2spec, type H2specCase } from "../helpers/h2spec.js";
import { BINARY, spawnDaemon } from "../helpers/spawn-daemon.js";

// A cold build of h2spec (~15 s on an idle machine) and two runs of ~15 s each (the known failures
// below wait out h2spec's 2 s timeout), with room for a loaded CI machine.
t.setTimeout(300_000);

const CASES = 146;
interface KnownFailure {
  readonly reason: string;
  /** Fails in some runs only: passing is not news. */
  readonly sometimes?: true;
}

/**
 * The cases that fail today, on both paths alike, each with why: the todo list. Any other case
 * failing fails the test; a case here that passes says so in its name (take it off the list then),
 * unless it is one that fails in some runs only.
 */
const FAILING_TODAY: ReadonlyMap<string, KnownFailure> = new Map<string, KnownFailure>([]);

/** The app answers any path with a body of at least 5 bytes: h2spec skips its flow-control cases (6.9.2/2) for shorter ones. */
const APP_BODY = "h2spec conformance app\n";

const built = existsSync(BINARY) ? h2specBinary() : { missing: "the binary is not built (make build)" };
// Something missing skips; a failed build with everything there is a failure of its own.
const skip = "missing" in built ? built.missing : "buildFailed" in built ? "h2spec did not build" : false;
if ("missing" in built) t.comment(`skipping h2spec: ${built.missing}`);
if ("buildFailed" in built) t.fail(built.buildFailed);

interface App {
  readonly upstream: H2Upstream;
  /** "METHOD path" of each request the app has seen. */
  readonly requests: string[];
}

async function startApp(t: Test): Promise<App> {
  const upstream = await startH2Upstream(t);
  const requests: string[] = [];
  upstream.handle((stream, headers) => {
    requests.push(`${String(headers[":method"])} ${String(headers[":path"])}`);
    stream.resume();
    stream.on("end", () => {
      if (stream.destroyed || stream.aborted) return;
      stream.respond({ ":status": 200, "content-type": "text/plain" });
      stream.end(APP_BODY);
    });
  });
  return { upstream, requests };
}

/** A fresh file for h2spec's report, removed after the test (not t.testdir(): its name is fixed per test, shared by two runs at once). */
function reportFile(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), "readiness-proxy-h2spec-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, "report.jsonl");
}

/** One assertion per case, named by h2spec's id; the known failures as todo. */
function assertCases(t: Test, cases: readonly H2specCase[], where: string): void {
  t.equal(cases.length, CASES, `h2spec ran all ${CASES} cases`);
  for (const id of FAILING_TODAY.keys()) t.ok(cases.some((one) => one.id === id), `the todo list's ${id} is an h2spec case`);
  for (const one of cases) {
    const passed = one.outcome === "passed";
    const known = FAILING_TODAY.get(one.id);
    // Said in the assertion's name, which every reporter shows (tap's terminal one drops comments).
    const news = known && !known.sometimes && passed;
    const name = news ? `${one.id}: passes now ${where}, take it off the todo list (FAILING_TODAY)` : one.id;
    const diagnostics = passed ? {} : { description: one.description, requirement: one.requirement, outcome: one.outcome, error: one.error };
    t.ok(passed, name, known ? { todo: known.reason, ...diagnostics } : diagnostics);
  }
}

/** The binary in front of a fresh app, h2spec's requests to `path`: every case asserted, and the proxy alive after. */
async function runAgainstBinary(t: Test, path: string, where: string): Promise<App> {
  const app = await startApp(t);
  const daemon = await spawnDaemon(t, [BINARY], ["--upstream", app.upstream.url]);
  const cases = await runH2spec((built as { path: string }).path, daemon.port, path, reportFile(t));
  assertCases(t, cases, where);
  t.equal(daemon.child.exitCode, null, "the proxy is still running");
  t.notOk(daemon.records.some((record) => record.msg === "uncaught exception"), "no uncaught exception was logged");
  return app;
}

t.test("h2spec on a proxied path: h2 end to end to an h2c app (--upstream-protocol auto)", { skip }, async (t) => {
  const app = await runAgainstBinary(t, "/", "on the proxied path");
  t.ok(app.requests.includes("GET /"), "h2spec's requests reached the app", { requests: app.requests.length });
});

t.test("h2spec on /healthz: answered by the proxy itself", { skip }, async (t) => {
  const app = await runAgainstBinary(t, "/healthz", "on /healthz");
  // CONTRACT §2: the health paths are GET and HEAD only; h2spec's POSTs to /healthz are the app's.
  t.same(app.requests.filter((request) => !request.startsWith("POST ")), [], "no GET or HEAD reached the app");
});
