// Runs the built daemon (the bundle under this node, or the single binary) as a child process and reads its JSON log.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import type { Test } from "tap";
import type { LogRecord } from "./log-capture.js";

const root = join(import.meta.dirname, "../..");
export const BUNDLE = join(root, "dist/readiness-proxy.cjs");
export const BINARY = join(root, "dist/readiness-proxy");

/** The two ways the program ships; each test that spawns it runs against the ones that are built. */
export const BUILT_ARTIFACTS: ReadonlyArray<{ name: string; command: string[]; built: boolean }> = [
  { name: "bundle", command: [process.execPath, BUNDLE], built: existsSync(BUNDLE) },
  { name: "binary", command: [BINARY], built: existsSync(BINARY) },
];

export interface SpawnedDaemon {
  readonly child: ChildProcess;
  readonly port: number;
  readonly records: LogRecord[];
  /** Resolves with the exit code (or the signal name) when the process ends. */
  readonly exited: Promise<number | string>;
  /** Resolves with the first record whose msg is `msg` (already logged or still to come). */
  waitForLog(msg: string): Promise<LogRecord>;
  stderr(): string;
}

export interface SpawnOptions {
  readonly env?: NodeJS.ProcessEnv;
  /** Prefix such as ["ip", "netns", "exec", "ns1"]. */
  readonly wrapper?: readonly string[];
}

/** Starts `command args` with `--listen 127.0.0.1:0` unless args say otherwise, and waits for `listening`. */
export async function spawnDaemon(t: Test, command: readonly string[], args: readonly string[], options: SpawnOptions = {}): Promise<SpawnedDaemon> {
  const argv = [...(options.wrapper ?? []), ...command, ...(args.some((arg) => arg.startsWith("--listen")) ? [] : ["--listen", "127.0.0.1:0"]), ...args];
  const child = spawn(argv[0]!, argv.slice(1), { env: options.env ?? { PATH: process.env.PATH }, stdio: ["ignore", "pipe", "pipe"] });
  const records: LogRecord[] = [];
  const waiters: Array<{ msg: string; resolve: (record: LogRecord) => void }> = [];
  let stderr = "";
  let pending = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    pending += chunk.toString();
    let newline: number;
    while ((newline = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      const record = JSON.parse(line) as LogRecord;
      records.push(record);
      for (const waiter of waiters.filter((entry) => entry.msg === record.msg)) waiter.resolve(record);
    }
  });
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | string>((resolve) => child.on("exit", (code, signal) => resolve(code ?? signal ?? "unknown")));
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  const waitForLog = (msg: string) =>
    new Promise<LogRecord>((resolve, reject) => {
      const found = records.find((record) => record.msg === msg);
      if (found) return resolve(found);
      waiters.push({ msg, resolve });
      void exited.then((code) => reject(new Error(`exited (${code}) before logging "${msg}": ${stderr}`)));
    });
  const listening = await waitForLog("listening");
  const port = Number(/:(\d+)$/.exec(String(listening.listen))?.[1]);
  return { child, port, records, exited, waitForLog, stderr: () => stderr };
}

/** Runs a command to completion: exit code, stdout, stderr. */
export function runToExit(argv: readonly string[], env: NodeJS.ProcessEnv = { PATH: process.env.PATH }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** Whether anything accepts a connection on the inspector's default port. */
export function inspectorPortAccepts(): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(9229, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
