// Builds and runs bench/targets/grpc-bench (a Go gRPC health server and a unary-call client) from Debian's golang-google-grpc-dev, in GOPATH mode: nothing is fetched.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { startListening } from "../lib/processes.mjs";

const GOPATH = "/usr/share/gocode";

/** Why the gRPC bench cannot be built here, or null. */
export function missingGrpc() {
  if (spawnSync("sh", ["-c", "command -v go"]).status !== 0) return "go is not installed (apt-get install golang-go)";
  if (!existsSync(join(GOPATH, "src/google.golang.org/grpc/server.go"))) return "gRPC's Go sources are not installed (apt-get install golang-google-grpc-dev)";
  return null;
}

/**
 * Builds dist/bench/grpc-bench (never committed) unless it is newer than its source: the first build
 * compiles gRPC and protobuf, about two minutes on this VM. Returns the program's path; throws
 * with the compiler's last words.
 */
export function buildGrpcBench({ root, here }) {
  const out = join(root, "dist/bench");
  mkdirSync(out, { recursive: true });
  const program = join(out, "grpc-bench");
  const source = join(here, "targets/grpc-bench/main.go");
  if (existsSync(program) && statSync(program).mtimeMs > statSync(source).mtimeMs) return program;
  const env = { ...process.env, GO111MODULE: "off", GOPATH, GOPROXY: "off", GOTOOLCHAIN: "local", GOFLAGS: "", CGO_ENABLED: "0", GOCACHE: join(out, "go-cache") };
  const built = spawnSync("go", ["build", "-trimpath", "-o", program, "."], { cwd: join(here, "targets/grpc-bench"), env, encoding: "utf8" });
  if (built.status !== 0) throw new Error(`go build of grpc-bench failed: ${(built.stderr || built.error?.message || "").trim().split("\n").at(-1)}`);
  return program;
}

/** The Go gRPC server (grpc.health.v1, service "bench" SERVING) on 127.0.0.1:`port`, GOMAXPROCS=1 like the Go peers of section 1. */
export function startGrpcServer(program, port) {
  return startListening([program, "server", `127.0.0.1:${port}`], port, { env: { ...process.env, GOMAXPROCS: "1" } });
}

/**
 * Unary Check calls at `concurrency` on one channel to 127.0.0.1:`port`, for at most `seconds`
 * and `calls`; with `rate`, an open loop: calls due at that rate, each timed from when it was due,
 * and `slice_p99_us` the p99 of each 1-s slice of due time. Resolves to `{ calls, errors, seconds,
 * p50_us, p99_us, first_error?, slice_p99_us? }`; killed
 * after `seconds` + 15 s if it hangs. `signal` ends it early with SIGTERM, on which it still reports.
 */
export function runGrpcClient(program, port, { concurrency = 10, seconds = 5, calls = 1_000_000, rate = 0, signal } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(program, ["client", "-addr", `127.0.0.1:${port}`, "-c", String(concurrency), "-seconds", String(seconds), "-calls", String(calls), "-rate", String(rate)], {
      env: { ...process.env, GOMAXPROCS: "1" },
    });
    signal?.addEventListener("abort", () => child.kill("SIGTERM"), { once: true });
    const guard = setTimeout(() => child.kill("SIGKILL"), (seconds + 15) * 1000);
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(guard);
      try {
        resolve(JSON.parse(output.trim().split("\n").at(-1)));
      } catch {
        reject(new Error(`grpc-bench client exited ${code}: ${output.trim()}`));
      }
    });
  });
}
