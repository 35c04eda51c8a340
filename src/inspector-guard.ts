// Keeps SIGUSR1 from opening the Node inspector: imported first by main.ts, so its one statement runs before any other module.
import inspector from "node:inspector";
import { isBuildingSnapshot } from "./snapshot-build.js";

/**
 * The runtime opens an inspector on 127.0.0.1:9229 when it gets SIGUSR1, and any process in
 * the pod's network namespace could then run code inside the proxy. A listener of our own
 * replaces the runtime's handler (libuv installs its own sigaction). `--disable-sigusr1` is
 * not used because it blocks the signal outright, and the entrypoint form must forward
 * SIGUSR1 to the app. This is the only code that runs at import time outside main.ts: every
 * module evaluated before it would widen the window in which the signal still opens one.
 */
if (!isBuildingSnapshot()) guardSigusr1();

/**
 * Installs the listener. A signal handler cannot go into a startup snapshot (sea-config.json
 * useSnapshot), so when the bundle is being built into one it is not installed at import, and
 * the snapshot's main function calls this first thing instead (main.ts).
 */
export function guardSigusr1(): void {
  process.on("SIGUSR1", ignoreSignal);
}

function ignoreSignal(): void {}

/**
 * Closes an inspector that a SIGUSR1 in the few milliseconds before the listener above was
 * installed may have opened; returns whether there was one. Called once at start.
 */
export function closeInspectorIfOpen(): boolean {
  if (inspector.url() === undefined) return false;
  inspector.close();
  return true;
}
