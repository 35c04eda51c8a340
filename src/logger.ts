// Creates the process logger: pino JSON on stdout, written synchronously (no transports: a SEA cannot load their worker files).
import { pino, type Logger, type Level } from "pino";

/** The levels `--log-level` accepts. */
export const LOG_LEVELS: readonly Level[] = ["fatal", "error", "warn", "info", "debug", "trace"];

/**
 * pino's own record shape (numeric `level`, epoch `time`), so existing pino tooling reads it.
 * Synchronous writes cost little at our volume (a few lines per transition, never per request)
 * and mean no line is lost when the process exits right after logging it.
 */
export function createLogger(
  level: Level,
  destination: pino.DestinationStream = pino.destination({ dest: 1, sync: true }),
): Logger {
  return pino({ level, base: { name: "readiness-proxy" } }, destination);
}
