// Runs test/helpers/grpc-app.py (a grpcio app whose health the test flips) and the grpcio client beside it; says why when Debian's python3-grpcio is missing.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import type { Test } from "tap";

/** Debian's interpreter: python3-grpcio installs for it, not for a python3 earlier on PATH (pyenv). */
export const SYSTEM_PYTHON = "/usr/bin/python3";
const APP = join(import.meta.dirname, "grpc-app.py");
export const GRPC_CLIENT = join(import.meta.dirname, "grpc-client.py");

let available: string | undefined | null = null;

/** Undefined when grpcio imports; else why not (the test skips with it). */
export function grpcioMissing(): string | undefined {
  if (available === null) {
    const probe = spawnSync(SYSTEM_PYTHON, ["-c", "import grpc, google.protobuf"], { encoding: "utf8" });
    available = probe.status === 0 ? undefined : `needs Debian's python3-grpcio and python3-protobuf for ${SYSTEM_PYTHON} (apt-get install python3-grpcio): ${(probe.stderr ?? String(probe.error)).trim().split("\n").at(-1)}`;
  }
  return available;
}

export type HealthMode = "SERVING" | "NOT_SERVING" | "UNKNOWN" | "SERVICE_UNKNOWN" | "NOTFOUND" | "UNIMPLEMENTED" | "HANG";

export interface GrpcApp {
  readonly port: number;
  readonly child: ChildProcess;
  /** Every call the app received, as `check <service>`, `watch <service>`, `echo <text>`. */
  readonly calls: string[];
  /** Sets a service's health (`""` is the server as a whole); resolves once the app applied it. */
  set(service: string, mode: HealthMode): Promise<void>;
  /** Resolves when a call line equal to `line` (or matching it) has arrived, already or later. */
  waitForCall(line: string | RegExp): Promise<void>;
  stop(): Promise<void>;
}

/** How to start it besides the port: the server's health at start (`""`'s), and a command prefix (`ip netns exec <ns>`). */
export interface GrpcAppOptions {
  readonly initialHealth?: HealthMode;
  readonly wrapper?: readonly string[];
}

/** Starts the app on 127.0.0.1 (`port` 0: any) and waits for its `listening` line. */
export function startGrpcApp(t: Test, port = 0, { initialHealth = "SERVING", wrapper = [] }: GrpcAppOptions = {}): Promise<GrpcApp> {
  const argv = [...wrapper, SYSTEM_PYTHON, "-u", APP, String(port), initialHealth];
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ["pipe", "pipe", "pipe"] });
  const calls: string[] = [];
  const acks: Array<() => void> = [];
  const callWaiters: Array<{ line: string | RegExp; resolve: () => void }> = [];
  const matches = (line: string, wanted: string | RegExp) => (typeof wanted === "string" ? line === wanted : wanted.test(line));
  let stderr = "";
  let pending = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    return exited;
  });
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`grpc app exited (${code}) before listening: ${stderr}`)));
    child.stdout!.on("data", (chunk: Buffer) => {
      pending += chunk.toString();
      let newline: number;
      while ((newline = pending.indexOf("\n")) >= 0) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        if (line.startsWith("listening ")) {
          resolve({
            port: Number(line.slice("listening ".length)),
            child,
            calls,
            set: (service, mode) =>
              new Promise<void>((done) => {
                acks.push(done);
                child.stdin!.write(`set ${service === "" ? "-" : service} ${mode}\n`);
              }),
            waitForCall: (wanted) =>
              calls.some((line) => matches(line, wanted)) ? Promise.resolve() : new Promise<void>((done) => callWaiters.push({ line: wanted, resolve: done })),
            stop: () => {
              child.kill("SIGKILL");
              return exited;
            },
          });
        } else if (line === "ok") {
          acks.shift()?.();
        } else {
          calls.push(line);
          for (const waiter of callWaiters.filter((entry) => matches(line, entry.line))) waiter.resolve();
        }
      }
    });
  });
}

/** A grpcio client running one command of test/helpers/grpc-client.py, its stdout lines as they come. */
export interface GrpcClient {
  readonly lines: string[];
  /** Resolves with the first line matching at index `from` or later, already printed or still to come. */
  waitForLine(wanted: RegExp, from?: number): Promise<string>;
  /** Resolves when the client exits. */
  readonly exited: Promise<void>;
}

/** `mode`: check, watch or call; `arg`: the service ("" allowed) or the method. */
export function startGrpcClient(t: Test, mode: "check" | "watch" | "call", port: number, arg: string): GrpcClient {
  const child = spawn(SYSTEM_PYTHON, ["-u", GRPC_CLIENT, mode, `127.0.0.1:${port}`, arg === "" ? "-" : arg], { stdio: ["ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  const waiters: Array<{ wanted: RegExp; from: number; resolve: (line: string) => void }> = [];
  let pending = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    pending += chunk.toString();
    let newline: number;
    while ((newline = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      lines.push(line);
      for (const waiter of waiters.filter((entry) => lines.length > entry.from && entry.wanted.test(line))) waiter.resolve(line);
    }
  });
  child.stderr!.resume();
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    return exited;
  });
  return {
    lines,
    exited,
    waitForLine: (wanted, from = 0) => {
      const found = lines.slice(from).find((line) => wanted.test(line));
      return found !== undefined ? Promise.resolve(found) : new Promise((resolve) => waiters.push({ wanted, from, resolve }));
    },
  };
}
