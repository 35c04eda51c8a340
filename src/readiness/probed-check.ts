// A check answered by asking an endpoint over HTTP or gRPC (CONTRACT §3b, §13, §15): `upstream` is one, each --readiness-required-http/-grpc another.
import { HttpHealthProbe } from "./http-health-probe.js";
import { GrpcHealthProbe } from "./grpc-health-probe.js";
import { UPSTREAM_CHECK } from "./check-results.js";
import type { HealthProbe, ProbeOutcome } from "./health-probe.js";
import type { GrpcCheckSpec, HttpCheckSpec } from "../config/named-check-specs.js";
import { socketPathOf, type Upstream } from "../config/upstream-url.js";
import type { Timers } from "../timers.js";

/** What a probed check's transition lines name: `path`, `url`, or `address` and `service`. */
export type ProbeTarget = Readonly<Record<string, string>>;

/** One named check with its probe: run in the same cached, single-flight run as the listener scan. */
export interface ProbedCheck {
  readonly name: string;
  readonly target: ProbeTarget;
  readonly probe: HealthProbe;
}

/** A named HTTP check: GET the URL (path and query), 200-399 passes. */
export function httpCheck(spec: HttpCheckSpec, timeoutMs: number): ProbedCheck {
  const url = new URL(spec.url);
  return { name: spec.name, target: { url: spec.url }, probe: new HttpHealthProbe({ origin: url.origin, path: `${url.pathname}${url.search}`, timeoutMs }) };
}

/** A named gRPC check: grpc.health.v1 Check for the service over h2c, SERVING passes; its timeout on `timers` (the runtime's by default). */
export function grpcCheck(spec: GrpcCheckSpec, timeoutMs: number, timers?: Timers): ProbedCheck {
  return {
    name: spec.name,
    target: { address: spec.address, service: spec.service },
    probe: new GrpcHealthProbe({ endpoint: spec.endpoint, service: spec.service, timeoutMs, timers }),
  };
}

/** The app's own check (`upstream`): its health path on the upstream's origin (§3b), or its gRPC service (§13). */
export function upstreamCheck(options: {
  readonly upstream: Upstream;
  readonly path?: string | undefined;
  readonly service?: string | undefined;
  readonly timeoutMs: number;
  /** The gRPC probe's timeout runs on these (the HTTP probe's is undici's too, on the runtime's). */
  readonly timers?: Timers | undefined;
}): ProbedCheck | undefined {
  const { upstream, path, service, timeoutMs, timers } = options;
  if (service !== undefined) return { name: UPSTREAM_CHECK, target: { service }, probe: new GrpcHealthProbe({ endpoint: upstream, service, timeoutMs, timers }) };
  if (path === undefined) return undefined;
  return { name: UPSTREAM_CHECK, target: { path }, probe: new HttpHealthProbe({ origin: upstream.origin, path, timeoutMs, socketPath: socketPathOf(upstream) }) };
}

/** A probe that throws is a failing probe: the endpoint is not known to be ready (no fail-open here). */
export async function probeSafely(probe: HealthProbe): Promise<ProbeOutcome> {
  try {
    return await probe.probe();
  } catch (error) {
    return { ok: false, reason: "connection failed", err: error instanceof Error ? error.message : String(error) };
  }
}
