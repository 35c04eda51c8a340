// grpc.health.v1.Health answered by the proxy (CONTRACT §13): Check and Watch for "", readyz, livez, healthz and each check's name; any other service is the app's.
import type { ReadinessReport } from "../readiness/check-results.js";
import type { DrainState } from "../http/drain-state.js";
import { HEALTH_CHECK_PATH, HEALTH_WATCH_PATH, decodeHealthCheckRequest, framedHealthCheckResponse, SERVING_STATUS, type ServingStatus } from "../grpc/health-messages.js";
import { healthTargetFor, servingStatusOf, type HealthTarget } from "./health-status.js";
import { HealthWatchers, type ReportSource, type Scheduler } from "./health-watchers.js";
import type { GrpcResponder } from "./grpc-responder.js";
import { GRPC_STATUS, isNativeGrpcContentType } from "../grpc/grpc-status.js";
import { isFramingError, unframeUnary } from "../grpc/message-framing.js";
import { WireFormatError } from "../grpc/protobuf-wire.js";


export type HealthMethod = "Check" | "Watch";

/**
 * The longest body the proxy answers itself: a HealthCheckRequest naming one of our services is
 * a few dozen bytes. A longer one names something else (or pads with unknown fields), so it goes
 * to the app, whose service it then is.
 */
export const MAX_HEALTH_REQUEST_BYTES = 1024;

/** A call that may be ours, from its head alone: POST to one of the two paths with a gRPC content-type; undefined otherwise. */
export function healthMethodOf(method: string, path: string, contentType: string | undefined): HealthMethod | undefined {
  if (method !== "POST" || !isNativeGrpcContentType(contentType)) return undefined;
  if (path === HEALTH_CHECK_PATH) return "Check";
  if (path === HEALTH_WATCH_PATH) return "Watch";
  return undefined;
}

/** The readiness check as the service reads it (ReadinessCheck implements it). */
export interface HealthReadiness extends ReportSource {
  /** Every configured check's name (§2), `shutdown` included. */
  readonly names: readonly string[];
}

export interface GrpcHealthServiceOptions {
  readonly readiness: HealthReadiness;
  readonly drain: DrainState;
  /** --readiness-cache-ttl: the watchers' poll period. */
  readonly ttlMs: number;
  readonly scheduler?: Scheduler;
}

const MALFORMED = "request is not a grpc.health.v1.HealthCheckRequest";

/** Decides whether a health call is ours and answers it from the one cached check. */
export class GrpcHealthService {
  readonly #readiness: HealthReadiness;
  readonly #drain: DrainState;
  readonly #names: ReadonlySet<string>;
  readonly watchers: HealthWatchers;

  constructor(options: GrpcHealthServiceOptions) {
    this.#readiness = options.readiness;
    this.#drain = options.drain;
    this.#names = new Set(options.readiness.names);
    this.watchers = new HealthWatchers(options);
  }

  /**
   * Given the whole body: answers and returns true when the service is ours, or when the body is
   * no HealthCheckRequest at all (grpc-status 3, or 12 for a compressed one); returns false,
   * having sent nothing, for the app's own services and for a body over
   * {@link MAX_HEALTH_REQUEST_BYTES}.
   */
  answer(method: HealthMethod, body: Uint8Array, responder: GrpcResponder): boolean {
    if (body.length > MAX_HEALTH_REQUEST_BYTES) return false;
    const message = unframeUnary(body);
    if (isFramingError(message)) {
      responder.trailersOnly(message.status, message.message);
      return true;
    }
    let service: string;
    try {
      service = decodeHealthCheckRequest(message);
    } catch (error) {
      if (!(error instanceof WireFormatError)) throw error;
      responder.trailersOnly(GRPC_STATUS.INVALID_ARGUMENT, MALFORMED);
      return true;
    }
    const target = healthTargetFor(service, this.#names);
    if (target === undefined) return false;
    if (method === "Watch") this.watchers.add(target, responder);
    else this.#check(target, responder);
    return true;
  }

  /** SIGTERM: readiness watchers hear NOT_SERVING at once (Check reads the drain flag live). */
  drainBegan(): void {
    this.watchers.drainBegan();
  }

  /** The listener closes: every Watch ends. */
  close(): void {
    this.watchers.close();
  }

  #check(target: HealthTarget, responder: GrpcResponder): void {
    if (target.kind === "liveness") {
      answerCheck(responder, SERVING_STATUS.SERVING);
      return;
    }
    const answer = (report: ReadinessReport) => answerCheck(responder, servingStatusOf(target, report, this.#drain));
    const cached = this.#readiness.peek();
    if (cached !== undefined) answer(cached);
    // ReadinessCheck turns every failure into a report; a rejection is a bug, answered as one.
    else this.#readiness.check().then(answer, () => responder.trailersOnly(GRPC_STATUS.INTERNAL, "readiness check failed"));
  }
}

function answerCheck(responder: GrpcResponder, status: ServingStatus): void {
  responder.sendHeaders();
  responder.sendMessage(framedHealthCheckResponse(status));
  responder.sendTrailers(GRPC_STATUS.OK);
}
