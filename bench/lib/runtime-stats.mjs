// Starts the daemon's bundle under the embedded runtime with bench/lib/runtime-stats-preload.cjs, and reads its heap, GC and event-loop figures on demand (SIGUSR2).
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startListening } from "./processes.mjs";

/** The runtime flags the SEA starts with (sea-config.json's execArgv), so the bundle runs as the binary does. */
export function seaExecArgv(root) {
  return JSON.parse(readFileSync(join(root, "sea-config.json"), "utf8")).execArgv ?? [];
}

/**
 * `runtime <sea execArgv> <extraFlags> --require preload <bundle> <args>` (bundle: this checkout's
 * dist/readiness-proxy.cjs unless given; `execArgv` in place of the SEA's flags; `extraEnv` added
 * to the environment), listening on `port`.
 * Resolves to `{ child, read() }`; read() resolves to the preload's next snapshot (cumulative
 * `allocatedBytes`, `pauses` by GC type, `gcEvents` since the last read, `eventLoopDelay`, and
 * `memory`: V8's heap committed and used, by space, external, ArrayBuffers, V8's malloc).
 */
export async function startInstrumentedBundle({ runtime, root, here, port, args, eventLoopDelay = false, stdout, extraFlags = [], execArgv = seaExecArgv(root), extraEnv = {}, bundle = join(root, "dist/readiness-proxy.cjs") }) {
  if (!existsSync(bundle)) throw new Error(`no bundle at ${bundle}: make build`);
  const file = join(mkdtempSync(join(tmpdir(), "rp-bench-stats-")), "stats.json");
  const env = { ...process.env, ...extraEnv, BENCH_STATS_FILE: file, BENCH_EVENT_LOOP_DELAY: eventLoopDelay ? "1" : "0" };
  const argv = [runtime, ...execArgv, ...extraFlags, "--require", join(here, "lib/runtime-stats-preload.cjs"), bundle, ...args];
  const child = await startListening(argv, port, { env, ...(stdout === undefined ? {} : { stdout }) });
  let sequence = 0;
  const read = async () => {
    child.kill("SIGUSR2");
    const deadline = Date.now() + 3000;
    for (;;) {
      try {
        const snapshot = JSON.parse(readFileSync(file, "utf8"));
        if (snapshot.sequence > sequence) {
          sequence = snapshot.sequence;
          return snapshot;
        }
      } catch {
        // not written yet, or being written
      }
      if (Date.now() > deadline) throw new Error("the instrumented bundle did not answer SIGUSR2 within 3 s");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  return { child, read };
}

/** The difference of two snapshots' GC pauses: `{ scavenges, markCompacts, pauseMs }` (other types summed into pauseMs). */
export function gcBetween(before, after) {
  const count = (snapshot, type) => snapshot.pauses[type]?.count ?? 0;
  const micros = (snapshot) => Object.values(snapshot.pauses).reduce((sum, kind) => sum + kind.micros, 0);
  return {
    scavenges: count(after, "Scavenge") - count(before, "Scavenge"),
    markCompacts: count(after, "MarkSweepCompact") - count(before, "MarkSweepCompact"),
    pauseMs: (micros(after) - micros(before)) / 1000,
  };
}
