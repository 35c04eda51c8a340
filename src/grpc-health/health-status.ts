// Which of the proxy's answers a grpc.health.v1 service name asks for (CONTRACT §13), and its serving status from one readiness report.
import type { DrainState } from "../http/drain-state.js";
import { evaluate } from "../http/readyz-answers.js";
import type { ReadinessReport } from "../readiness/check-results.js";
import { SERVING_STATUS, type ServingStatus } from "../grpc/health-messages.js";

/** What a service name of ours stands for: the /readyz verdict, liveness, or one named check. */
export type HealthTarget = { readonly kind: "readiness" } | { readonly kind: "liveness" } | { readonly kind: "check"; readonly name: string };

const READINESS: HealthTarget = { kind: "readiness" };
const LIVENESS: HealthTarget = { kind: "liveness" };

/**
 * `""` (the kubelet's default) and `readyz`: readiness; `livez` and `healthz`: liveness; each
 * check's name of §2: that check. Any other name is the app's own service: undefined, and the
 * request goes to the app untouched.
 */
export function healthTargetFor(service: string, checkNames: ReadonlySet<string>): HealthTarget | undefined {
  switch (service) {
    case "":
    case "readyz":
      return READINESS;
    case "livez":
    case "healthz":
      return LIVENESS;
    default:
      return checkNames.has(service) ? { kind: "check", name: service } : undefined;
  }
}

/** SERVING exactly when /readyz (or /readyz/<name>) would answer 200; liveness is SERVING while we serve. */
export function servingStatusOf(target: HealthTarget, report: ReadinessReport, state: DrainState): ServingStatus {
  if (target.kind === "liveness") return SERVING_STATUS.SERVING;
  const evaluation = evaluate(report, state);
  const ok = target.kind === "readiness" ? evaluation.ready : evaluation.results.find((result) => result.name === target.name)?.ok === true;
  return ok ? SERVING_STATUS.SERVING : SERVING_STATUS.NOT_SERVING;
}
