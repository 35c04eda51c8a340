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
  // Compared in place, without slicing off the query: this runs for every proxied request too.
  if (isPath(url, "/readyz")) return "readiness";
  if (isPath(url, "/health") || isPath(url, "/healthz")) return "liveness";
  return undefined;
}

/** `url` is `path` or `path?query`. */
function isPath(url: string, path: string): boolean {
  return url.startsWith(path) && (url.length === path.length || url.charCodeAt(path.length) === 0x3f /* ? */);
}

/** A body with its headers prepared once, as writeHead's flat [name, value, ...] form. */
interface PreparedBody {
  readonly body: Buffer;
  readonly headers: readonly string[];
}

function prepare(json: string): PreparedBody {
  const body = Buffer.from(json);
  return {
    body,
    headers: ["content-type", "application/json", "cache-control", "no-store", "content-length", String(body.length)],
  };
}

const OK_BODY = prepare('{"status":"ok"}');
const READY_BODY = prepare('{"status":"ready"}');
const DRAINING_BODY = prepare('{"status":"not ready","draining":true}');

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
  #lastMissingBody = prepare("{}");

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
  #notReady(req: IncomingMessage, res: ServerResponse, body: PreparedBody): void {
    if (wantsHtml(req.headers.accept)) this.#errors.send(req, res, 503, requestIdOf(req));
    else send(req, res, 503, body);
  }

  /** The 503 body, rebuilt only when the missing list changes. */
  #missingBody(missing: readonly number[]): PreparedBody {
    if (missing !== this.#lastMissing) {
      this.#lastMissing = missing;
      this.#lastMissingBody = prepare(JSON.stringify({ status: "not ready", missingListeners: missing }));
    }
    return this.#lastMissingBody;
  }
}

function send(req: IncomingMessage, res: ServerResponse, status: number, prepared: PreparedBody): void {
  if (res.destroyed) return;
  res.writeHead(status, prepared.headers as string[]);
  res.end(req.method === "HEAD" ? undefined : prepared.body);
}
