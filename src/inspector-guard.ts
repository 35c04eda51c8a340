// Keeps SIGUSR1 from opening the Node inspector: imported first by main.ts, so its one statement runs before any other module.
import { isBuildingSnapshot } from "./snapshot-build.js";

/**
 * The runtime opens an inspector on 127.0.0.1 when it gets SIGUSR1, and any process in the
 * pod's network namespace could then run code inside the proxy. A listener of our own
 * replaces the runtime's handler (libuv installs its own sigaction). `--disable-sigusr1` is
 * not used because it blocks the signal outright, and the entrypoint form must forward
 * SIGUSR1 to the app. This is the only code that runs at import time outside main.ts: every
 * module evaluated before it would widen the window in which the signal still opens one
 * (so this module imports no built-in module).
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
 *
 * The binary runs with --inspect-port=0 (sea-config.json): an inspector the signal opens binds
 * a port the kernel picks, and the runtime writes that port into process.debugPort, which
 * reads 0 until then. So 0 means none was opened, and node:inspector is not loaded to ask
 * (with node:worker_threads, which it loads, ~1.3 ms of every start). Under any other port
 * (the bundle run by node, with its caller's flags) node:inspector is asked.
 * test/process/inspector-guard.test.ts checks the runtime's side of this.
 */
export function closeInspectorIfOpen(): boolean {
  if (process.debugPort === 0) return false;
  const inspector = process.getBuiltinModule("node:inspector");
  if (inspector.url() === undefined) return false;
  inspector.close();
  return true;
}
