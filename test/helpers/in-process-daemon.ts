// Starts the daemon in this process from command-line arguments, with logs captured, on 127.0.0.1:0.
import type { Test } from "tap";
import { parseCommandLine } from "../../src/cli.js";
import type { AddressInfo } from "node:net";
import { createDaemon, type Daemon, type DaemonOptions, type MetricsFactory } from "../../src/daemon.js";
import { metricsFactory } from "../../src/metrics/metrics.js";
import type { TableReader } from "../../src/procfs/listener-scan.js";
import { captureLog, type CapturedLog } from "./log-capture.js";
import { ManualTimers } from "./test-doubles.js";

export interface TestDaemon extends Daemon {
  readonly address: AddressInfo;
  readonly port: number;
  readonly logs: CapturedLog;
  /** With --metrics-listen: the metrics listener's port. */
  readonly metricsPort: number | undefined;
}

/** Starts a daemon for `t` and stops it (listener and upstream pool) when `t` ends. */
export async function startTestDaemon(t: Test, args: string[], readTable?: TableReader, extra: Pick<DaemonOptions, "timers" | "warmUpBeforeReady"> = {}): Promise<TestDaemon> {
  const commandLine = parseCommandLine(["--listen", "127.0.0.1:0", ...args], {}, { writeOut: () => {}, writeErr: (text) => t.comment(text) });
  if (commandLine.action !== "run") throw new Error(`arguments refused: ${args.join(" ")}`);
  const logs = captureLog();
  const { config } = commandLine;
  let metricsPort: number | undefined;
  const metrics: MetricsFactory | undefined =
    config.metricsListen &&
    ((parts) => {
      const created = metricsFactory(config.metricsListen!, logs.log, config.metricsMerge)(parts);
      return { ...created, start: async () => (metricsPort = (await created.start()).port) };
    });
  // 2 s bounds a teardown; a test about the timeout running out names its own, shorter, --shutdown-timeout.
  const shutdownTimeoutMs = args.includes("--shutdown-timeout") ? config.shutdownTimeoutMs : 2_000;
  const daemon = createDaemon({ ...config, shutdownTimeoutMs }, { log: logs.log, readTable, metrics, ...extra });
  const address = await daemon.start();
  const timers = extra.timers;
  t.teardown(async () => {
    daemon.server.closeAllConnections();
    if (daemon.shutdown.draining) return;
    const stopped = daemon.shutdown.run("teardown");
    // On hand-moved timers the teardown moves them: the shutdown's grace and timeout run on them too.
    await (timers instanceof ManualTimers ? timers.until(stopped, shutdownTimeoutMs + 1_000) : stopped);
  });
  return { ...daemon, address, port: address.port, logs, metricsPort };
}
