// One error base with stable codes: callers branch on `code`, never on message text.

/** Stable codes of the errors this program raises itself. */
export const ERROR_CODES = {
  /** A bad flag, environment variable or option value: exit 2. */
  usage: "RP_ERR_USAGE",
  /** The listener could not be opened (in use, permission denied): exit 1. */
  listen: "RP_ERR_LISTEN",
  /** The app's command (entrypoint form) could not be started: exit 127 or 126. */
  appStart: "RP_ERR_APP_START",
  /** --app-start-wait-fatal: the required listeners did not listen in time, the app was never started: exit 1. */
  appStartWait: "RP_ERR_APP_START_WAIT",
} as const;

export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES];

/** Exit codes of CONTRACT §7 and §8 (126 and 127 follow the shells: found but not executable, not found). */
export const EXIT_CODES = { ok: 0, runtime: 1, usage: 2, notExecutable: 126, notFound: 127 } as const;

/** An error whose message is fit to print as one line to a user, with the exit code it implies. */
export class ReadinessProxyError extends Error {
  readonly code: ErrorCode;
  readonly exitCode: number;

  constructor(code: ErrorCode, message: string, exitCode: number) {
    super(message);
    this.name = "ReadinessProxyError";
    this.code = code;
    this.exitCode = exitCode;
  }
}

/** The `code` of a Node or undici error (`ENOENT`, `UND_ERR_SOCKET`), if it has one; callers branch on it. */
export function errorCode(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null || !("code" in error)) return undefined;
  return typeof error.code === "string" ? error.code : undefined;
}

/** A user mistake on the command line or in the environment: `<input>: <what was expected>, got "<value>"`. */
export function usageError(input: string, expected: string, got?: string): ReadinessProxyError {
  const suffix = got === undefined ? "" : `, got ${JSON.stringify(got)}`;
  return new ReadinessProxyError(ERROR_CODES.usage, `${input}: ${expected}${suffix}`, EXIT_CODES.usage);
}
