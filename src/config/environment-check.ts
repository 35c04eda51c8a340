// Finds READINESS_PROXY_* variables that no option reads (a typo, a singular for a plural), leaving Kubernetes' service-link variables alone.

/** Read outside the option table: the fault plan of test builds (src/relay/fault-injection.ts). */
const OTHER_VARIABLES = ["READINESS_PROXY_TEST_FAULTS"];

const PREFIX = "READINESS_PROXY_";

/**
 * What the kubelet injects when a Service named `readiness-proxy` (or `readiness-proxy-<x>`)
 * exists in the namespace: `_SERVICE_HOST`, `_SERVICE_PORT`, `_SERVICE_PORT_<NAME>`, `_PORT`,
 * `_PORT_<port>_<PROTO>` and its `_PROTO`, `_PORT`, `_ADDR`. Never ours, never a mistake.
 */
const SERVICE_LINK = /^READINESS_PROXY_(?:[A-Z0-9_]+_)?(?:SERVICE_HOST|SERVICE_PORT(?:_[A-Z0-9_]+)?|PORT(?:_\d+_(?:TCP|UDP|SCTP)(?:_(?:PROTO|PORT|ADDR))?)?)$/;

/** An unknown variable, and the known one it most likely meant. */
export interface UnknownVariable {
  readonly variable: string;
  readonly closest: string;
}

/** Every `READINESS_PROXY_*` variable in `env` that is neither one of `known` nor a service link, with its closest known name. */
export function unknownVariables(env: NodeJS.ProcessEnv, known: readonly string[]): UnknownVariable[] {
  const names = new Set([...known, ...OTHER_VARIABLES]);
  return Object.keys(env)
    .filter((variable) => variable.startsWith(PREFIX) && !names.has(variable) && !SERVICE_LINK.test(variable))
    .sort()
    .map((variable) => ({ variable, closest: closestName(variable, known) }));
}

/** The known name at the smallest edit distance (the first of equals, in `known`'s order). */
function closestName(variable: string, known: readonly string[]): string {
  let best = known[0]!;
  let bestDistance = Infinity;
  for (const name of known) {
    const distance = editDistance(variable, name);
    if (distance < bestDistance) [best, bestDistance] = [name, distance];
  }
  return best;
}

/** Levenshtein distance, one row at a time. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}
