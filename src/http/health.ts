// /health, /healthz (liveness), /readyz with its named checks (readiness, CONTRACT §2), /wait-for-drain (§14) and /app-health (§17), answered on the proxy's own listener.
import type { DrainState } from "./drain-state.js";
import type { ReadinessReport } from "../readiness/check-results.js";
import type { ReadinessCheck } from "../readiness/readiness-check.js";
import type { ErrorResponder } from "./error-response.js";
import { wantsHtml } from "./error-response.js";
import { BAD_WAIT_BODY, evaluate, parseReadyzQuery, readyzJson, readyzVerbose, singleCheckText, type ReadyzQuery } from "./readyz-answers.js";
import { HeldReadyz } from "./readyz-wait.js";
import { requestIdOf } from "./request-id.js";
import type { RequestView, ResponseWriter } from "./response-writer.js";
import type { WaitForDrain } from "./wait-for-drain.js";
import type { AppHealth } from "./app-health.js";

/** Which health path a request is for, or undefined when it belongs to the upstream. */
export type HealthPath = "liveness" | "readiness" | "single check" | "drain wait" | "app health";

const SINGLE_CHECK_PREFIX = "/readyz/";

/**
 * Exact path, query ignored, GET and HEAD only: `POST /readyz` is the upstream's. Every
 * `/readyz/<x>` is ours, a name that matches no check included (404): a probe of a check that
 * is not configured must fail, never reach an app that may answer 200 to anything. Called for
 * every request, so it avoids parsing the URL.
 */
export function matchHealthPath(method: string, url: string): HealthPath | undefined {
  if (method !== "GET" && method !== "HEAD") return undefined;
  // Compared in place, without slicing off the query: this runs for every proxied request too.
  if (isPath(url, "/readyz")) return "readiness";
  if (isPath(url, "/health") || isPath(url, "/healthz")) return "liveness";
  if (url.startsWith(SINGLE_CHECK_PREFIX)) return "single check";
  if (isPath(url, "/wait-for-drain")) return "drain wait";
  if (isPath(url, "/app-health")) return "app health";
  return undefined;
}

/** `url` is `path` or `path?query`. */
function isPath(url: string, path: string): boolean {
  return url.startsWith(path) && (url.length === path.length || url.charCodeAt(path.length) === 0x3f /* ? */);
}

/** A body with its headers prepared once, as a flat [name, value, ...] list. */
interface PreparedBody {
  readonly body: Buffer;
  readonly headers: readonly string[];
}

function prepare(text: string, contentType = "application/json"): PreparedBody {
  const body = Buffer.from(text);
  return {
    body,
    headers: ["content-type", contentType, "cache-control", "no-store", "content-length", String(body.length)],
  };
}

const PLAIN_TEXT = "text/plain; charset=utf-8";
const OK_BODY = prepare('{"status":"ok"}');
const BAD_WAIT_BODY_PREPARED = prepare(BAD_WAIT_BODY);

/** The plain /readyz answer for one report and drain state, kept until either changes. */
interface PreparedAnswer {
  readonly report: ReadinessReport;
  readonly draining: boolean;
  readonly maintenance: boolean | undefined;
  readonly status: number;
  readonly prepared: PreparedBody;
}

/** Answers the health paths; built once, with the plain answer prepared once per report. */
export class HealthEndpoints {
  readonly #readiness: ReadinessCheck;
  readonly #drain: DrainState;
  readonly #errors: ErrorResponder;
  readonly #names: ReadonlySet<string>;
  /** The 404 for a `/readyz/<x>` that names no check: the configured names, in check order. */
  readonly #noSuchCheck: PreparedBody;
  readonly #waitForDrain: WaitForDrain;
  readonly #held: HeldReadyz;
  readonly #appHealth: AppHealth | undefined;
  #lastAnswer: PreparedAnswer | undefined;

  /** `appHealth` undefined: no app health path is configured, and `/app-health` is the app's like any path. */
  constructor(readiness: ReadinessCheck, drain: DrainState, errors: ErrorResponder, waitForDrain: WaitForDrain, appHealth?: AppHealth) {
    this.#readiness = readiness;
    this.#drain = drain;
    this.#errors = errors;
    this.#names = new Set(readiness.names);
    this.#noSuchCheck = prepare(JSON.stringify({ error: "no such check", checks: readiness.names }));
    this.#waitForDrain = waitForDrain;
    this.#held = new HeldReadyz(readiness);
    this.#appHealth = appHealth;
  }

  /**
   * Whether a matched path is ours to answer: every one but `/app-health` when no app health
   * path is configured (then it is the app's like any path). Both protocols ask this, then {@link answer}.
   */
  owns(path: HealthPath): boolean {
    return path !== "app health" || this.#appHealth !== undefined;
  }

  /** Answers a path {@link owns} accepted, over either protocol: the one dispatch of the health paths. */
  answer(path: HealthPath, request: RequestView, writer: ResponseWriter): void {
    switch (path) {
      case "liveness":
        return this.liveness(writer);
      case "readiness":
        return this.readiness(request, writer);
      case "single check":
        return this.singleCheck(request, writer);
      case "drain wait":
        return this.#waitForDrain.answer(writer);
      case "app health":
        return this.#appHealth!.answer(writer);
    }
  }

  /** Liveness: always 200 while the process serves; readiness and draining never change it. */
  liveness(writer: ResponseWriter): void {
    send(writer, 200, OK_BODY);
  }

  /** Readiness from the cached check; synchronous whenever the cache is fresh. */
  readiness(request: RequestView, writer: ResponseWriter): void {
    const query = parseReadyzQuery(request.url);
    if (query?.waitMs === "invalid") return send(writer, 400, BAD_WAIT_BODY_PREPARED);
    const waitMs = query?.waitMs;
    this.#withReport((report) => {
      if (waitMs !== undefined && waitMs > 0 && this.#holds(report, query!)) {
        this.#held.hold(report, waitMs, (next) => this.#holds(next, query!), (next) => this.#answerQuery(request, writer, next, query!));
        return;
      }
      if (query) this.#answerQuery(request, writer, report, query);
      else this.#answerPlain(request, writer, report);
    });
  }

  /** Whether `?wait` holds the answer: it would be a 503 that is not draining or maintenance. */
  #holds(report: ReadinessReport, query: ReadyzQuery): boolean {
    if (this.#drain.draining || this.#drain.maintenance === true) return false;
    return !evaluate(report, this.#drain, query.exclude).ready;
  }

  /**
   * `/readyz/<name>`: `ok`, or 503 with the reason. A name that is not exactly a check's
   * (`%2F`, `..`, a trailing slash, another case: compared as sent, never decoded) is a 404
   * naming the configured checks, so that a mistyped probe says what it could have asked.
   */
  singleCheck(request: RequestView, writer: ResponseWriter): void {
    const name = singleCheckName(request.url);
    if (!this.#names.has(name)) {
      send(writer, 404, this.#noSuchCheck);
      return;
    }
    this.#withReport((report) => {
      const result = evaluate(report, this.#drain).results.find((candidate) => candidate.name === name)!;
      send(writer, result.ok ? 200 : 503, prepare(singleCheckText(result), PLAIN_TEXT));
    });
  }

  /** Runs `answer` with the current report: at once from the cache, else after the shared run. */
  #withReport(answer: (report: ReadinessReport) => void): void {
    const cached = this.#readiness.peek();
    if (cached !== undefined) {
      answer(cached);
      return;
    }
    // ReadinessCheck turns scan and probe failures into a report; a rejection here is a bug.
    this.#readiness.check().then(answer, () => answer({ verdict: { state: "present", ready: true, ports: [] }, checks: [] }));
  }

  #answerPlain(request: RequestView, writer: ResponseWriter, report: ReadinessReport): void {
    const { draining, maintenance } = this.#drain;
    let answer = this.#lastAnswer;
    if (answer?.report !== report || answer.draining !== draining || answer.maintenance !== maintenance) {
      const evaluation = evaluate(report, this.#drain);
      answer = { report, draining, maintenance, status: evaluation.ready ? 200 : 503, prepared: prepare(readyzJson(report, evaluation)) };
      this.#lastAnswer = answer;
    }
    if (answer.status === 503 && wantsHtml(request.header("accept"))) this.#errors.send(request, writer, 503, requestIdOf(request));
    else send(writer, answer.status, answer.prepared);
  }

  #answerQuery(request: RequestView, writer: ResponseWriter, report: ReadinessReport, query: ReadyzQuery): void {
    const evaluation = evaluate(report, this.#drain, query.exclude);
    const status = evaluation.ready ? 200 : 503;
    if (query.verbose) send(writer, status, prepare(readyzVerbose(evaluation), PLAIN_TEXT));
    else if (status === 503 && wantsHtml(request.header("accept"))) this.#errors.send(request, writer, 503, requestIdOf(request));
    else send(writer, status, prepare(readyzJson(report, evaluation)));
  }
}

/** The check name of a `/readyz/<name>[?query]` target, as sent. */
function singleCheckName(url: string): string {
  const mark = url.indexOf("?");
  return url.slice(SINGLE_CHECK_PREFIX.length, mark < 0 ? url.length : mark);
}

function send(writer: ResponseWriter, status: number, prepared: PreparedBody): void {
  writer.send(status, prepared.headers, prepared.body);
}
