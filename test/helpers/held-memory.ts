// What the test process holds after a full collection, for the tests that bound memory per octet held.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/** gc() without starting node with --expose-gc (as src/relay/stream-garbage.ts gets it). */
function collector(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}
const gc = collector();

/** What the process holds after a full collection: V8's heap and the Buffers' memory outside it. */
export function heldAfterGc(): number {
  gc();
  gc();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

export const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
