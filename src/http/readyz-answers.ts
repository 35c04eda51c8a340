// What /readyz says (CONTRACT §2): the JSON body, the kube-style `?verbose` text, `?exclude`, and `/readyz/<name>`; pure functions over one report.
import { MAINTENANCE_CHECK, SHUTDOWN_CHECK, listenerCheckName, type CheckResult, type ReadinessReport } from "../readiness/check-results.js";
import { parseDuration } from "../config/duration.js";
import type { DrainState } from "./drain-state.js";
import { MAX_WAIT_MS } from "./readyz-wait.js";

/** What a `/readyz` query asks for; `exclude` holds names as given (trimmed, blanks dropped). */
export interface ReadyzQuery {
  readonly verbose: boolean;
  readonly exclude: readonly string[];
  /** `?wait=<duration>`: hold a not-ready answer this long at most; `"invalid"` for a value that is not a duration of at most 30s. */
  readonly waitMs?: number | "invalid";
}

/** The query of `url` (`verbose` is present with any value), or undefined when it asks for nothing. */
export function parseReadyzQuery(url: string): ReadyzQuery | undefined {
  const mark = url.indexOf("?");
  if (mark < 0) return undefined;
  const params = new URLSearchParams(url.slice(mark + 1));
  const exclude = params.getAll("exclude").map((name) => name.trim()).filter((name) => name !== "");
  const verbose = params.has("verbose");
  const waitText = params.get("wait");
  const waitMs = waitText === null ? undefined : parseWait(waitText);
  if (waitMs !== undefined) return { verbose, exclude, waitMs };
  return verbose || exclude.length > 0 ? { verbose, exclude } : undefined;
}

function parseWait(text: string): number | "invalid" {
  const ms = parseDuration(text);
  return ms === undefined || ms > MAX_WAIT_MS ? "invalid" : ms;
}

/** The 400 body of a `?wait` that is not a duration of at most 30s. */
export const BAD_WAIT_BODY = `{"error":"wait must be a duration of at most 30s, like 800ms"}`;

/** Every check's result with `maintenance` and `shutdown` read live, and what the excludes did. */
export interface Evaluation {
  readonly results: readonly CheckResult[];
  readonly excluded: ReadonlySet<string>;
  /** Excluded names that match no check, sorted (the `warn:` line). */
  readonly unmatched: readonly string[];
  /** Failing checks that count, in check order. */
  readonly failed: readonly CheckResult[];
  readonly ready: boolean;
}

const SHUTDOWN_OK: CheckResult = { name: SHUTDOWN_CHECK, ok: true };
const SHUTDOWN_DRAINING: CheckResult = { name: SHUTDOWN_CHECK, ok: false, reason: "draining" };
const MAINTENANCE_OFF: CheckResult = { name: MAINTENANCE_CHECK, ok: true };
const MAINTENANCE_ON: CheckResult = { name: MAINTENANCE_CHECK, ok: false, reason: "maintenance" };
const NO_EXCLUDES: ReadonlySet<string> = new Set();

/** Applies the live states (maintenance first when it exists, draining last) and the excludes to one cached report. */
export function evaluate(report: ReadinessReport, state: DrainState, exclude: readonly string[] = []): Evaluation {
  const shutdown = state.draining ? SHUTDOWN_DRAINING : SHUTDOWN_OK;
  const results = state.maintenance === undefined ? [...report.checks, shutdown] : [state.maintenance ? MAINTENANCE_ON : MAINTENANCE_OFF, ...report.checks, shutdown];
  const names = new Set(results.map((result) => result.name));
  const excluded = exclude.length === 0 ? NO_EXCLUDES : new Set(exclude.filter((name) => names.has(name)));
  const unmatched = [...new Set(exclude.filter((name) => !names.has(name)))].sort();
  const failed = results.filter((result) => !result.ok && !excluded.has(result.name));
  return { results, excluded, unmatched, failed, ready: failed.length === 0 };
}

/**
 * The JSON body: `{"status":"ready"}`, or `"not ready"` with `missingListeners` (ascending),
 * `draining` and `failedChecks` as they apply. Only fixed reasons and names: error details
 * go to the log.
 */
export function readyzJson(report: ReadinessReport, evaluation: Evaluation): string {
  if (evaluation.ready) return '{"status":"ready"}';
  const failedNames = evaluation.failed.map((result) => result.name);
  const missing = report.verdict.state === "missing" ? report.verdict.missing.filter((key) => failedNames.includes(listenerCheckName(key, report.listenerNames))) : [];
  return JSON.stringify({
    status: "not ready",
    ...(missing.length > 0 ? { missingListeners: missing } : {}),
    ...(failedNames.includes(SHUTDOWN_CHECK) ? { draining: true } : {}),
    failedChecks: failedNames,
  });
}

/** The Kubernetes apiserver's verbose form: `[+]name ok` / `[-]name failed: reason` lines, then the verdict line. */
export function readyzVerbose(evaluation: Evaluation): string {
  let text = "";
  for (const result of evaluation.results) {
    if (evaluation.excluded.has(result.name)) text += `[+]${result.name} excluded: ok\n`;
    else if (result.ok) text += result.note === undefined ? `[+]${result.name} ok\n` : `[+]${result.name} ok (${result.note})\n`;
    else text += `[-]${result.name} failed: ${result.reason}\n`;
  }
  if (evaluation.unmatched.length > 0) {
    text += `warn: some health checks cannot be excluded: no matches for ${evaluation.unmatched.map((name) => JSON.stringify(name)).join(",")}\n`;
  }
  return `${text}readyz check ${evaluation.ready ? "passed" : "failed"}\n`;
}

/** `/readyz/<name>`: `ok`, or `<name> failed: <reason>` (as the apiserver's per-check paths answer). */
export function singleCheckText(result: CheckResult): string {
  return result.ok ? "ok" : `${result.name} failed: ${result.reason}\n`;
}
