// Whether this run is the SEA's startup-snapshot build: decided when the bundle is made, so a start from the code cache never loads node:v8 to ask.

/**
 * Set by the Makefile from sea-config.json's "useSnapshot" (esbuild --define); undefined in
 * the TypeScript sources the tests run.
 */
declare const SNAPSHOT_BUILD: boolean | undefined;

/**
 * True only while the bundle runs inside the startup-snapshot builder. A bundle made for the
 * code cache (SNAPSHOT_BUILD false) answers false without asking: node:v8 brings heap_utils,
 * promise_hooks and the serdes binding with it, ~1 ms of every start, for this one question.
 * A snapshot bundle run by plain node, and the sources, ask node:v8.
 */
export function isBuildingSnapshot(): boolean {
  if (typeof SNAPSHOT_BUILD !== "undefined" && !SNAPSHOT_BUILD) return false;
  return process.getBuiltinModule("node:v8").startupSnapshot.isBuildingSnapshot();
}
