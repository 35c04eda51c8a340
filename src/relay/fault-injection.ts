// A test-only hook that throws at a named seam of the relay, to prove each fault boundary; compiled out of the shipped bundle.
/**
 * The shipped bundle is built with `--define:FAULT_INJECTION_BUILD=false`, so nothing can arm
 * the hook there (no flag, no variable); the TypeScript sources and the test bundle leave it
 * undefined or true.
 */
declare const FAULT_INJECTION_BUILD: boolean | undefined;

/** Where a fault can be injected: each is an entry from the event loop into the relay. */
export const FAULT_SEAMS = ["head parsed", "body chunk", "upstream head", "upstream body", "tunnel data", "timer", "pool release", "limiter admit", "client event", "upstream event", "h2 stream event"] as const;
export type FaultSeam = (typeof FAULT_SEAMS)[number];

/** What an armed hook throws: recognisable in logs and tests. */
export class InjectedFault extends Error {
  readonly seam: FaultSeam;
  constructor(seam: FaultSeam) {
    super(`fault injected at ${seam}`);
    this.name = "InjectedFault";
    this.seam = seam;
  }
}

/** Decides, each time a seam is passed, whether it throws. */
export type FaultPlan = (seam: FaultSeam) => boolean;

let plan: FaultPlan | undefined;

/** Whether this build can arm the hook at all (false in the shipped binary). */
export const faultInjectionAllowed: boolean = typeof FAULT_INJECTION_BUILD === "undefined" ? true : FAULT_INJECTION_BUILD;

/** Arms (or with undefined, disarms) the hook; refused where the build does not allow it. */
export function armFaults(next: FaultPlan | undefined): boolean {
  if (!faultInjectionAllowed) return false;
  plan = next;
  return true;
}

/** Whether any plan is armed: seams that cost a listener (the tunnel's) are only wired then. */
export function faultsArmed(): boolean {
  return plan !== undefined;
}

/** Passes `seam`: throws when the armed plan says so; one branch when nothing is armed. */
export function faultAt(seam: FaultSeam): void {
  if (plan !== undefined && plan(seam)) throw new InjectedFault(seam);
}

/** Runs `call` behind a fault boundary of its own at `seam` (a timer's callback, say): what it throws goes to `onFault`, never up into the event loop. */
export function withinBoundary(seam: FaultSeam, call: () => void, onFault: (error: unknown) => void): void {
  try {
    faultAt(seam);
    call();
  } catch (error) {
    onFault(error);
  }
}

/**
 * The plan of `READINESS_PROXY_TEST_FAULTS` (test builds only): `<rate>` throws at any seam
 * with that probability (`0.01`), `<seam>@<n>` at the n-th passing of that seam only.
 */
export function faultPlanFromEnv(text: string | undefined): FaultPlan | undefined {
  if (text === undefined || text === "") return undefined;
  const at = text.lastIndexOf("@");
  if (at > 0) {
    const seam = text.slice(0, at) as FaultSeam;
    const nth = Number(text.slice(at + 1));
    let passes = 0;
    return (passed) => passed === seam && ++passes === nth;
  }
  const rate = Number(text);
  return Number.isFinite(rate) && rate > 0 ? () => Math.random() < rate : undefined;
}
