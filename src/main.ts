// Process entry: parse the command line, start the daemon, handle signals; the only place that calls process.exit.
import { parseCommandLine } from "./cli.js";
import { createDaemon } from "./daemon.js";
import { EXIT_CODES, ReadinessProxyError } from "./errors.js";
import { createLogger } from "./logger.js";

async function main(): Promise<void> {
  const commandLine = parseCommandLine(process.argv.slice(2), process.env, {
    writeOut: (text) => process.stdout.write(text),
    writeErr: (text) => process.stderr.write(text),
  });
  if (commandLine.action === "exit") {
    process.exitCode = commandLine.exitCode;
    return;
  }
  const { config } = commandLine;
  const log = createLogger(config.logLevel);
  process.on("uncaughtException", (error) => {
    log.fatal({ err: error }, "uncaught exception");
    process.exit(EXIT_CODES.runtime);
  });

  let daemon;
  try {
    daemon = createDaemon(config, { log });
  } catch (error) {
    exitOnKnownError(error);
  }

  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      // A second signal means "now": in-flight requests are cut.
      log.warn({ signal }, "second signal; exiting at once");
      process.exit(EXIT_CODES.runtime);
    }
    stopping = true;
    daemon.shutdown.run(signal).then(
      () => process.exit(EXIT_CODES.ok),
      (error: unknown) => {
        log.error({ err: error }, "shutdown failed");
        process.exit(EXIT_CODES.runtime);
      },
    );
  };
  // Installed before the listener opens: a signal right after `listening` must find them.
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);

  try {
    await daemon.start();
  } catch (error) {
    exitOnKnownError(error);
  }
}

/** Our own errors are one line for a person and their exit code; anything else is a bug and keeps its stack. */
function exitOnKnownError(error: unknown): never {
  if (error instanceof ReadinessProxyError) {
    process.stderr.write(`error: ${error.message}\n`);
    process.exit(error.exitCode);
  }
  throw error;
}

void main();
