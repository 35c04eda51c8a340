// Builds h2spec, the HTTP/2 conformance suite, from the shared source beside the repository (../shared/tools/h2spec) and runs it against a port.
import { execFile, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, symlinkSync } from "node:fs";
import { join, relative } from "node:path";

const ROOT = join(import.meta.dirname, "../..");
/** summerwind/h2spec at af83a65 (MIT), kept outside the repository: the clean clone in CI has ../shared beside it. */
const SOURCE = join(ROOT, "../shared/tools/h2spec/src");
/** The shared source has no cmd/h2spec, so this main drives the library (see its header). */
const MAIN = join(import.meta.dirname, "../conformance/h2spec/main.go");
const DEBIAN_GOPATH = "/usr/share/gocode";
/** What the library imports from outside itself, by Debian package. */
const DEBIAN_SOURCES: ReadonlyArray<[string, string]> = [
  ["golang.org/x/net/http2/hpack", "golang-golang-x-net-dev"],
  ["github.com/fatih/color", "golang-github-fatih-color-dev"],
];
/** Build output: removed by `make clean`, never committed. */
const BUILD_ROOT = join(ROOT, "dist/h2spec");

/** One h2spec case's outcome, as test/conformance/h2spec/main.go reports it. */
export interface H2specCase {
  /** h2spec's own id: "http2/6.9.1/3" (what `h2spec http2/6.9.1/3` would run). */
  readonly id: string;
  readonly description: string;
  readonly requirement: string;
  readonly outcome: "passed" | "failed" | "skipped";
  readonly error?: string;
  readonly ms: number;
}

/**
 * The binary's path, built at most once for a given source (main.go, the shared source, the Go
 * toolchain): a build directory under dist/h2spec named by their hash. Or what is missing to build
 * it (the test skips), or how the build failed with everything there (the test fails).
 */
export function h2specBinary(): { readonly path: string } | { readonly missing: string } | { readonly buildFailed: string } {
  if (!existsSync(join(SOURCE, "h2spec.go"))) return { missing: `h2spec's source is not at ${SOURCE} (the shared tools beside the repository)` };
  const go = spawnSync("go", ["version"], { encoding: "utf8" });
  if (go.status !== 0) return { missing: "needs Go: apt-get install golang-go golang-golang-x-net-dev golang-github-fatih-color-dev" };
  const absent = DEBIAN_SOURCES.filter(([path]) => !existsSync(join(DEBIAN_GOPATH, "src", path))).map(([, pkg]) => pkg);
  if (absent.length > 0) return { missing: `needs Debian's ${absent.join(", ")} (apt-get install ${absent.join(" ")})` };

  const hash = createHash("sha256").update(go.stdout).update(readFileSync(MAIN));
  for (const file of filesUnder(SOURCE)) hash.update(relative(SOURCE, file)).update("\0").update(readFileSync(file));
  const dir = join(BUILD_ROOT, hash.digest("hex").slice(0, 16));
  const binary = join(dir, "h2spec");
  if (existsSync(binary)) return { path: binary };

  // GOPATH mode: the shared source appears as its import path through a symlink, Debian's tree supplies the rest.
  const gopath = join(dir, "gopath");
  const importDir = join(gopath, "src/github.com/summerwind/h2spec");
  mkdirSync(join(gopath, "src/github.com/summerwind"), { recursive: true });
  if (!existsSync(importDir)) symlinkSync(SOURCE, importDir);
  // Built beside its final name and renamed into place: two runs building at once both end with a whole binary.
  const partial = join(dir, `h2spec.${process.pid}.tmp`);
  const build = spawnSync("go", ["build", "-o", partial, MAIN], {
    env: { PATH: process.env.PATH, HOME: dir, GO111MODULE: "off", GOPROXY: "off", GOPATH: `${gopath}:${DEBIAN_GOPATH}`, GOCACHE: join(BUILD_ROOT, "go-cache") },
    encoding: "utf8",
    timeout: 300_000,
  });
  if (build.status !== 0) return { buildFailed: `go build of h2spec failed: ${(build.stderr || String(build.error)).trim().split("\n").slice(-5).join(" | ")}` };
  renameSync(partial, binary);
  return { path: binary };
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

/** Runs every case (h2spec's default set, without --strict) against 127.0.0.1:`port`, its requests to `path`. */
export function runH2spec(binary: string, port: number, path: string, reportFile: string, timeout = "2s"): Promise<H2specCase[]> {
  const args = ["-port", String(port), "-path", path, "-timeout", timeout, "-report", reportFile];
  return new Promise((resolve, reject) => {
    execFile(binary, args, { timeout: 180_000, maxBuffer: 16 * 1024 * 1024 }, (error, _stdout, stderr) => {
      // Exit 1 means some case failed; the report says which. Anything else is h2spec itself failing.
      if (error && error.code !== 1) return reject(new Error(`h2spec ${args.join(" ")}: ${error.message}\n${stderr}`));
      const lines = readFileSync(reportFile, "utf8").split("\n").filter((line) => line !== "");
      resolve(lines.map((line) => JSON.parse(line) as H2specCase));
    });
  });
}
