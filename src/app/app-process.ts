// The app of the entrypoint form (CONTRACT §8): started directly (no shell) in a process group of its own, signalled only when told, its end reported once, never left running when we exit.
import { spawn, type ChildProcess } from "node:child_process";
import type { Logger } from "pino";
import { ERROR_CODES, EXIT_CODES, ReadinessProxyError, errorCode } from "../errors.js";
import type { AppExit } from "./exit-status.js";

/** Signals that mean something to the app only (reload, rotate logs, resize): forwarded at once, nothing else. */
export const FORWARDED_SIGNALS: readonly NodeJS.Signals[] = ["SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGWINCH"];

export interface AppProcessOptions {
  /** The command and its arguments, as given after `--`. */
  readonly command: readonly string[];
  readonly log: Logger;
  /** After the stop signal, how long the app has before SIGKILL. */
  readonly stopTimeoutMs: number;
  /** Resolves once our lifecycle lines so far are on the stdout the app shares, or after a short bound (main.ts). */
  readonly logWritten?: () => Promise<void>;
}

/**
 * One run of the app. It inherits our environment (NODE_OPTIONS included: it is the app's),
 * working directory and stdio. Stopping is the shutdown's last step, after the drain, so the
 * app serves every request the proxy still forwards.
 *
 * The app runs in a session and process group of its own (setsid, node's `detached`): a
 * terminal's Ctrl-C (SIGINT to the foreground process group) then reaches the proxy alone, which
 * drains before it signals the app, as the kubelet's SIGTERM does. The price is that the app
 * outlives a proxy that dies without running its exit handlers (SIGKILL, the OOM killer): in a
 * container the kernel ends it with the container's PID namespace (tini or the proxy is PID 1);
 * on a terminal, `kill -- -<pid>` with the pid of `app started` ends its group. Every exit the
 * proxy does run (process.exit, an uncaught exception) SIGKILLs the app's group first.
 */
export class AppProcess {
  readonly #options: AppProcessOptions;
  #child: ChildProcess | undefined;
  #exit: AppExit | undefined;
  #stoppedByUs = false;
  readonly #exited: Promise<AppExit>;
  #onExit!: (exit: AppExit) => void;

  constructor(options: AppProcessOptions) {
    this.#options = options;
    this.#exited = new Promise((resolve) => (this.#onExit = resolve));
  }

  /** Resolves once the app has exited (on its own, signalled or killed). */
  get exited(): Promise<AppExit> {
    return this.#exited;
  }

  /** How it ended; undefined while it runs (or before it started). */
  get exit(): AppExit | undefined {
    return this.#exit;
  }

  /** Whether we signalled it to end (the stop after a drain, or SIGKILL): its end is then ours, not its own (CONTRACT §17). */
  get stoppedByUs(): boolean {
    return this.#stoppedByUs;
  }

  /**
   * Starts the command. Rejects with a one-line error and the shells' exit code when it cannot
   * be started: 127 when not found, 126 when found but not executable.
   */
  start(): Promise<void> {
    const { command, log } = this.#options;
    const [file, ...args] = command as [string, ...string[]];
    return new Promise((resolve, reject) => {
      const child = spawn(file, args, { stdio: "inherit", detached: true });
      this.#child = child;
      // Synchronous on purpose: 'exit' handlers cannot wait. Removed once the app is gone.
      const killOnOurExit = () => this.#signalGroup("SIGKILL");
      child.once("error", (error) => {
        if (child.pid !== undefined) return; // a failed kill() of a running app: its exit still comes
        const code = errorCode(error);
        const notFound = code === "ENOENT";
        const reason = notFound ? "not found" : code === "EACCES" ? "permission denied (not executable)" : error.message;
        reject(new ReadinessProxyError(ERROR_CODES.appStart, `cannot start ${file}: ${reason}`, notFound ? EXIT_CODES.notFound : EXIT_CODES.notExecutable));
      });
      child.once("spawn", () => {
        process.once("exit", killOnOurExit);
        log.info({ pid: child.pid, command }, "app started");
        resolve();
      });
      child.once("exit", (code, signal) => {
        const exit: AppExit = { code, signal };
        this.#exit = exit;
        process.removeListener("exit", killOnOurExit);
        log.info(code === null ? { signal } : { code }, "app exited");
        this.#onExit(exit);
      });
    });
  }

  /** Passes a signal on to the running app (SIGHUP and the like). */
  forward(signal: NodeJS.Signals): void {
    if (this.#isRunning()) this.#child!.kill(signal);
  }

  /** Sends `signal`, then SIGKILL after the stop timeout; resolves with how the app ended. */
  async stop(signal: NodeJS.Signals): Promise<AppExit> {
    if (!this.#isRunning()) return this.#exited;
    const { log, stopTimeoutMs } = this.#options;
    log.info({ signal, pid: this.#child!.pid }, "stopping app");
    // `stopping app` out before the app's reaction to the signal: where our writes are made off the
    // loop (a socket the app shares) the app could otherwise answer first (measured without this
    // wait: 6 order assertions failed in 4 runs of the entrypoint, app-lifecycle, ctrl-c and jobs
    // tests). The start does not wait: `app started` follows the spawn anyway.
    await this.#options.logWritten?.();
    if (!this.#isRunning()) return this.#exited;
    this.#stoppedByUs = true;
    this.#child!.kill(signal);
    const timer = setTimeout(() => {
      log.warn({ appStopTimeoutMs: stopTimeoutMs }, "app did not exit in time; killing it");
      this.kill();
    }, stopTimeoutMs);
    const exit = await this.#exited;
    clearTimeout(timer);
    return exit;
  }

  /** SIGKILL now (a second SIGTERM, or the stop timeout), to the app's whole group: no worker of its is left behind. */
  kill(): void {
    this.#signalGroup("SIGKILL");
  }

  /** `signal` to every process of the app's group (its pid is the group's id), if it still runs. */
  #signalGroup(signal: NodeJS.Signals): void {
    if (!this.#isRunning()) return;
    this.#stoppedByUs = true;
    try {
      process.kill(-this.#child!.pid!, signal);
    } catch {
      // The group is gone (ESRCH): the app's exit event is on its way.
    }
  }

  #isRunning(): boolean {
    return this.#child?.pid !== undefined && this.#exit === undefined;
  }
}
