// How the app's end becomes the proxy's exit code (CONTRACT §8): its own code, or 128 + the number of the signal that killed it.
import { constants } from "node:os";

/** How the app's process ended, as node:child_process reports it: exactly one of the two is set. */
export interface AppExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** The shells' convention, so `docker inspect` and the kubelet read the same code a shell would show: SIGKILL is 137. */
export function exitCodeOf(exit: AppExit): number {
  if (exit.code !== null) return exit.code;
  const number = exit.signal === null ? undefined : constants.signals[exit.signal];
  return 128 + (number ?? 0);
}

/**
 * The proxy's own exit code in the entrypoint form: the app's ({@link exitCodeOf}), except that
 * with --exit-zero-on-stop an app we stopped (SIGTERM, SIGINT, POST /quitquitquit) gives 0, so a
 * Job's pod succeeds instead of exiting 143 (CONTRACT §17). An app that ended on its own keeps its code.
 */
export function proxyExitCode(exit: AppExit, options: { readonly stoppedByUs: boolean; readonly exitZeroOnStop: boolean }): number {
  return options.exitZeroOnStop && options.stoppedByUs ? 0 : exitCodeOf(exit);
}
