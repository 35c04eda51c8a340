// /health, /healthz (liveness) and /readyz (readiness, CONTRACT §2), answered on the proxy's own listener.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ReadinessCheck } from "../readiness/readiness-check.js";
import type { Verdict } from "../readiness/verdict.js";
import type { ErrorResponder } from "./error-response.js";
import { wantsHtml } from "./error-response.js";
import { requestIdOf } from "./request-id.js";

/** Which health path a request is for, or undefined when it belongs to the upstream. */
export type HealthPath = "liveness" | "readiness";

/**
 * Exact path, query ignored, GET and HEAD only: `POST /readyz` and `/readyz/x` are the
 * upstream's. Called for every request, so it avoids parsing the URL.
 */
export function matchHealthPath(method: string | undefined, url: string | undefined): HealthPath | undefined {
  if ((method !== "GET" && method !== "HEAD") || url === undefined) return undefined;
  const queryAt = url.indexOf("?");
  const path = queryAt < 0 ? url : url.slice(0, queryAt);
  if (path === "/health" || path === "/healthz") return "liveness";
  if (path === "/readyz") return "readiness";
  return undefined;
}

const JSON_HEADERS = { "content-type": "application/json", "cache-control": "no-store" } as const;
const OK_BODY = Buffer.from('{"status":"ok"}');
const READY_BODY = Buffer.from('{"status":"ready"}');
const DRAINING_BODY = Buffer.from('{"status":"not ready","draining":true}');

/** Tells /readyz that shutdown has begun. */
export interface DrainState {
  readonly draining: boolean;
}

/** Answers the health paths; built once, its bodies prepared ahead. */
export class HealthEndpoints {
  readonly #readiness: ReadinessCheck;
  readonly #drain: DrainState;
  readonly #errors: ErrorResponder;
  #lastMissing: readonly number[] | undefined;
  #lastMissingBody = Buffer.alloc(0);

  constructor(readiness: ReadinessCheck, drain: DrainState, errors: ErrorResponder) {
    this.#readiness = readiness;
    this.#drain = drain;
    this.#errors = errors;
  }

  /** Liveness: always 200 while the process serves; readiness and draining never change it. */
  liveness(req: IncomingMessage, res: ServerResponse): void {
    send(req, res, 200, OK_BODY);
  }

  /** Readiness from the cached check; synchronous whenever the cache is fresh. */
  readiness(req: IncomingMessage, res: ServerResponse): void {
    if (this.#drain.draining) {
      this.#notReady(req, res, DRAINING_BODY);
      return;
    }
    const cached = this.#readiness.peek();
    if (cached !== undefined) {
      this.#answer(req, res, cached);
      return;
    }
    this.#readiness.check().then(
      (verdict) => this.#answer(req, res, verdict),
      // ReadinessCheck turns scan failures into a verdict; reaching here is a bug, and we fail open.
      () => send(req, res, 200, READY_BODY),
    );
  }

  #answer(req: IncomingMessage, res: ServerResponse, verdict: Verdict): void {
    if (this.#drain.draining) this.#notReady(req, res, DRAINING_BODY);
    else if (verdict.ready) send(req, res, 200, READY_BODY);
    else this.#notReady(req, res, this.#missingBody(verdict.missing));
  }

  /** A browser gets the branded 503 page; probes and scripts get the contract's JSON. */
  #notReady(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
    if (wantsHtml(req.headers.accept)) this.#errors.send(req, res, 503, requestIdOf(req));
    else send(req, res, 503, body);
  }

  /** The 503 body, rebuilt only when the missing list changes. */
  #missingBody(missing: readonly number[]): Buffer {
    if (missing !== this.#lastMissing) {
      this.#lastMissing = missing;
      this.#lastMissingBody = Buffer.from(JSON.stringify({ status: "not ready", missingListeners: missing }));
    }
    return this.#lastMissingBody;
  }
}

function send(req: IncomingMessage, res: ServerResponse, status: number, body: Buffer): void {
  if (res.destroyed) return;
  res.writeHead(status, { ...JSON_HEADERS, "content-length": body.length });
  res.end(req.method === "HEAD" ? undefined : body);
}
