// Runs test/helpers/grpc-peer.py (Debian's python3-grpcio): a gRPC app on 127.0.0.1:0, and client scenarios that print one JSON line.
import { execFile, spawn } from "node:child_process";
import { join } from "node:path";
import type { Test } from "tap";

const PEER = join(import.meta.dirname, "grpc-peer.py");
/** Debian's python, where python3-grpcio installs (a pyenv python on PATH would not have it). */
const PYTHON = "/usr/bin/python3";

/** Why the gRPC tests cannot run here, or false. */
export async function grpcMissing(): Promise<string | false> {
  const ok = await new Promise<boolean>((resolve) => execFile(PYTHON, ["-c", "import grpc"], (error) => resolve(error === null)));
  return ok ? false : "python3-grpcio is not installed (apt-get install python3-grpcio)";
}

/** Starts the gRPC app; resolves with its port once it listens; killed when `t` ends. */
export function startGrpcApp(t: Test): Promise<number> {
  const child = spawn(PYTHON, [PEER, "app"], { stdio: ["ignore", "pipe", "inherit"] });
  t.teardown(() => {
    child.kill("SIGKILL");
  });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes("\n")) resolve(Number(out.trim()));
    });
    child.on("exit", (code) => reject(new Error(`gRPC app exited (${code})`)));
  });
}

/** Runs one client scenario against `port`; resolves with its JSON result. */
export function grpcClient(port: number, scenario: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    execFile(PYTHON, [PEER, "client", String(port), scenario], { timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`${scenario}: ${error.message} ${stderr}`));
      resolve(JSON.parse(stdout) as Record<string, unknown>);
    });
  });
}

/** The drain scenario: a server stream through `port`; `between` runs after its first message, then the rest is released at `appPort`. */
export function grpcStreamThroughDrain(port: number, appPort: number, between: () => Promise<void>): Promise<Record<string, unknown>> {
  const child = spawn(PYTHON, [PEER, "drain", String(port), String(appPort)], { stdio: ["pipe", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.startsWith("first\n") && !child.stdin.writableEnded) {
        void between().then(() => child.stdin.end("go\n"), reject);
      }
    });
    child.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out.split("\n").filter(Boolean).at(-1)!) as Record<string, unknown>) : reject(new Error(`drain client exited ${code}: ${out}`))));
  });
}
