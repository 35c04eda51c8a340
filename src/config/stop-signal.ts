// --app-stop-signal (CONTRACT §14): the signal the app receives after the drain, written `TERM` or `SIGTERM`.
import { usageError } from "../errors.js";

/** The signals an app may want as its graceful stop (nginx and php-fpm: SIGQUIT); SIGKILL and SIGSTOP are not a stop request. */
export const STOP_SIGNALS: readonly NodeJS.Signals[] = ["SIGTERM", "SIGINT", "SIGQUIT", "SIGHUP", "SIGUSR1", "SIGUSR2", "SIGWINCH"];

/** `QUIT` or `SIGQUIT` (any case) -> `SIGQUIT`; undefined when not given; anything else is a usage error. */
export function parseStopSignal(input: string, text: string | undefined): NodeJS.Signals | undefined {
  if (text === undefined) return undefined;
  const upper = text.toUpperCase();
  const name = upper.startsWith("SIG") ? upper : `SIG${upper}`;
  const signal = STOP_SIGNALS.find((candidate) => candidate === name);
  if (signal === undefined) throw usageError(input, `expected one of ${STOP_SIGNALS.join(", ")}`, text);
  return signal;
}
