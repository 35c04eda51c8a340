// Builds test/grpc/kube-probe (grpc-go from Debian's golang-google-grpc-dev) once per test run and runs it: the kubelet's gRPC probe, as near as the tests can get.
import { execFile, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const SOURCE = join(import.meta.dirname, "../grpc/kube-probe/main.go");
const GOPATH = "/usr/share/gocode";

/**
 * The binary's path, built at most once for a given source: every test file of the run (tap runs
 * each in its own process) finds it in the same temporary directory, named by the source's hash.
 * Or why it cannot be built (the test skips with it).
 */
export function kubeProbeBinary(): { readonly path: string } | { readonly missing: string } {
  if (!existsSync(`${GOPATH}/src/google.golang.org/grpc/health/grpc_health_v1`)) {
    return { missing: "needs Debian's golang-go and golang-google-grpc-dev (apt-get install golang-go golang-google-grpc-dev)" };
  }
  const hash = createHash("sha256").update(readFileSync(SOURCE)).digest("hex").slice(0, 16);
  const dir = join(tmpdir(), `readiness-proxy-kube-probe-${hash}`);
  const binary = join(dir, "kube-probe");
  if (existsSync(binary)) return { path: binary };
  mkdirSync(dir, { recursive: true });
  // Built beside its final name and renamed into place: two test files building at once both end with a whole binary.
  const partial = join(dir, `kube-probe.${process.pid}.tmp`);
  const build = spawnSync("go", ["build", "-o", partial, SOURCE], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME ?? tmpdir(), GO111MODULE: "off", GOPATH, GOCACHE: join(tmpdir(), "readiness-proxy-go-cache") },
    encoding: "utf8",
    timeout: 300_000,
  });
  if (build.status !== 0) return { missing: `go build of the kube-probe failed: ${(build.stderr || String(build.error)).trim().split("\n").slice(-3).join(" | ")}` };
  renameSync(partial, binary);
  return { path: binary };
}

export interface ProbeRun {
  /** 0 only on SERVING (or, with `method`, an OK call). */
  readonly exitCode: number;
  /** `status SERVING`, `status NOT_SERVING`, `error: …`, `code 14 Unavailable: …`. */
  readonly line: string;
}

export interface ProbeOptions {
  readonly service?: string;
  readonly timeout?: string;
  /** One unary call of this method instead of a health check. */
  readonly method?: string;
}

/** Runs the probe once against 127.0.0.1:`port`. */
export function runKubeProbe(binary: string, port: number, options: ProbeOptions = {}): Promise<ProbeRun> {
  const args = ["-addr", `127.0.0.1:${port}`, "-service", options.service ?? "", "-timeout", options.timeout ?? "1s"];
  if (options.method) args.push("-method", options.method);
  return new Promise((resolve) => {
    execFile(binary, args, { timeout: 10_000 }, (error, stdout) => {
      const exitCode = error ? (typeof error.code === "number" ? error.code : -1) : 0;
      resolve({ exitCode, line: stdout.trim() });
    });
  });
}
