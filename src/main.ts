// Process entry: parse the command line, start the daemon, handle signals; the only place that calls process.exit.
// First, before any other module is evaluated: SIGUSR1 must never open the inspector.
import { closeInspectorIfOpen, guardSigusr1 } from "./inspector-guard.js";
import { FORWARDED_SIGNALS } from "./app/app-process.js";
import { proxyExitCode } from "./app/exit-status.js";
import { isAdminCommand, parseCommandLine } from "./cli.js";
import { createDaemon, type Daemon } from "./daemon.js";
import { EXIT_CODES, ReadinessProxyError } from "./errors.js";
import { createProcessLog } from "./logger.js";
import { openStdoutDestinations } from "./access-log/stdout-sink.js";
import { exitIfAskedPastStuckWrite, exitPastStuckWrite } from "./stuck-write-exit.js";
import { armFaults, faultPlanFromEnv, faultsArmed } from "./relay/fault-injection.js";
import { isBuildingSnapshot } from "./snapshot-build.js";
import { warmUpStartPaths } from "./snapshot-warmup.js";

/**
 * How long the app's stop signal waits for `stopping app` to be on stdout. Healthy, that is one
 * write on the thread pool; only a stdout that takes nothing (the app's own lines cannot get out
 * then either) costs the whole bound, once per stop. 50 ms ran out on a loaded 2-core machine (the
 * app's reaction came first in the entrypoint test of a full `make test` under load).
 */
const STOP_LINE_WAIT_MS = 1_000;

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  // The image that replaced a process stuck in a write to stdout: it only exits, with that process's code.
  exitIfAskedPastStuckWrite(argv);
  if (isAdminCommand(argv)) {
    // A client of a running proxy: its module (and node:http) is loaded for it alone, never at a daemon's start.
    const { runAdminCommand } = await import("./admin/admin-command.js");
    process.exitCode = await runAdminCommand(argv, process.env, { writeOut: writeHelpOrVersion, writeErr: (text) => process.stderr.write(text) });
    return;
  }
  const commandLine = parseCommandLine(argv, process.env, {
    writeOut: writeHelpOrVersion,
    writeErr: (text) => process.stderr.write(text),
  });
  if (commandLine.action === "exit") {
    process.exitCode = commandLine.exitCode;
    return;
  }
  const { config } = commandLine;
  // In the entrypoint form the app shares stdout: its description must stay as the app got it.
  const processLog = createProcessLog(config.logLevel, (reports) => openStdoutDestinations(reports, { sharedWithApp: config.appCommand.length > 0 }));
  const { log } = processLog;
  // Found while parsing, before the logger existed: logged as JSON lines like every other.
  for (const warning of commandLine.warnings) log.warn(warning.fields, warning.msg);
  /** Every exit once the logger exists: the log's last lines (asynchronous writes) are out first. */
  const exit = async (code: number): Promise<never> => {
    await processLog.end();
    // Appended now, so it runs after every other 'exit' listener (one kills the app's group).
    if (processLog.writeStuck()) process.once("exit", () => exitPastStuckWrite(code));
    process.exit(code);
  };
  if (closeInspectorIfOpen()) log.warn("an inspector opened by SIGUSR1 during start-up was closed");
  // Test builds only (the shipped bundle compiles the hook out, and this arms nothing there).
  if (armFaults(faultPlanFromEnv(process.env.READINESS_PROXY_TEST_FAULTS)) && faultsArmed()) log.warn("fault injection armed (a test build)");
  process.on("uncaughtException", (error) => {
    log.fatal({ err: error }, "uncaught exception");
    void exit(EXIT_CODES.runtime);
  });

  let daemon: Daemon;
  try {
    // prom-client is loaded only when metrics are asked for: start-up and the hot path pay nothing otherwise.
    const metrics = config.metricsListen && (await import("./metrics/metrics.js")).metricsFactory(config.metricsListen, log, config.metricsMerge);
    // POST /quitquitquit: the shutdown a signal starts, defined below with the signals' handling.
    daemon = createDaemon(config, { log, accessLog: processLog.accessLog, metrics: metrics || undefined, requestStop: (reason) => beginStop(reason), logWritten: () => processLog.lifecycleWritten(STOP_LINE_WAIT_MS), warmUpBeforeReady: true });
  } catch (error) {
    return exitOnKnownError(error, exit);
  }
  const { app } = daemon;
  /** Ours is 0 after a clean shutdown; in the entrypoint form it is the app's (CONTRACT §8), or 0 for one we stopped with --exit-zero-on-stop (§17). */
  const finalExitCode = () => (app?.exit ? proxyExitCode(app.exit, { stoppedByUs: app.stoppedByUs, exitZeroOnStop: config.exitZeroOnStop }) : EXIT_CODES.ok);

  let stopping = false;
  const stop = (reason: string, skipDelay: boolean) => {
    stopping = true;
    daemon.shutdown.run(reason, { skipDelay }).then(
      () => exit(finalExitCode()),
      (error: unknown) => {
        log.error({ err: error }, "shutdown failed");
        return exit(EXIT_CODES.runtime);
      },
    );
  };
  /** The first SIGTERM or SIGINT, or POST /quitquitquit: the whole shutdown, then the exit. Returns false when one already runs. */
  const beginStop = (reason: string): boolean => {
    if (stopping) return false;
    if (daemon.holdingApp) {
      // --app-start-wait still holds the app: nothing was started, nothing is in flight for it.
      stopping = true;
      log.info({ reason, appStarted: false }, "stopped");
      void exit(EXIT_CODES.ok);
      return true;
    }
    stop(reason, false);
    return true;
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (beginStop(signal)) return;
    // A second signal means "now": in-flight requests are cut.
    log.warn({ signal }, "second signal; exiting at once");
    if (app && app.exit === undefined) {
      app.kill();
      void app.exited.then(() => exit(finalExitCode()));
      return;
    }
    void exit(app ? finalExitCode() : EXIT_CODES.runtime);
  };
  // Installed before the listener opens: a signal right after `listening` must find them.
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  if (app) {
    for (const signal of FORWARDED_SIGNALS) process.on(signal, () => app.forward(signal));
    // The app ended on its own: stop taking traffic at once, finish what is in flight, exit with its code.
    void app.exited.then(() => {
      if (!stopping) stop("app exited", true);
    });
  }

  try {
    await daemon.start();
  } catch (error) {
    return exitOnKnownError(error, exit);
  }
}

/** Our own errors are one line for a person and their exit code; anything else is a bug and keeps its stack. */
function exitOnKnownError(error: unknown, exit: (code: number) => Promise<never>): Promise<never> {
  if (error instanceof ReadinessProxyError) {
    process.stderr.write(`error: ${error.message}\n`);
    return exit(error.exitCode);
  }
  throw error;
}

/**
 * `--help` and `--version`: the only text for process.stdout. Its getter is reached nowhere else
 * on purpose: for a pipe, node makes fd 1 non-blocking, and the app in the entrypoint form shares
 * that file description. `--help | head`: a reader that leaves early is not an error of ours (no
 * stack trace); the rest is dropped and the exit code stays the command's own.
 */
function writeHelpOrVersion(text: string): void {
  process.stdout.off("error", ignoreClosedReader).on("error", ignoreClosedReader);
  process.stdout.write(text);
}

function ignoreClosedReader(error: NodeJS.ErrnoException): void {
  if (error.code !== "EPIPE") throw error;
}

// When built into a SEA startup snapshot ("useSnapshot" in sea-config.json; off today, see the
// Makefile for why), every module above is evaluated at build time and a start only runs
// main(), which reads argv and env then.
if (isBuildingSnapshot()) {
  warmUpStartPaths();
  process.getBuiltinModule("node:v8").startupSnapshot.setDeserializeMainFunction(() => {
    guardSigusr1();
    void main();
  });
} else void main();
