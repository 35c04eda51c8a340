// Rootful podman as this kind of machine needs it, on a storage of its own under a temp dir, for the image tests.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Test } from "tap";
import type { LogRecord } from "../helpers/log-capture.js";

const root = join(import.meta.dirname, "../..");

/** The image archive `make image` writes for Node's architecture name. */
export const imageArchive = (arch: string) => join(root, `dist/readiness-proxy-image-linux-${arch}.tar`);

/** The name `podman load` gives our archive (index.json's ref name). */
export const IMAGE = "localhost/readiness-proxy:0.1.0";

export interface Result {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

const runs = (command: string, args: string[] = ["--version"]) => spawnSync(command, args).status === 0;

/** Why the podman tests cannot run here (each test names what it needs), or false. */
export function podmanUnavailable(needs: { kubePlay?: boolean; busybox?: boolean } = {}): string | false {
  if (process.platform !== "linux") return "containers need Linux";
  if (process.getuid?.() !== 0) return "needs root: the helper runs podman rootful (rootless needs subuid ranges this test does not set up)";
  if (!runs("podman")) return "podman is not installed (Debian's podman; .ci/run installs it)";
  if (!runs("runc")) return "runc is not installed: crun refuses this kernel's hybrid cgroups (Debian's runc)";
  if (needs.kubePlay && !runs("catatonit")) return "catatonit is not installed: podman kube play runs it in each pod's infra container (Debian's catatonit)";
  if (needs.kubePlay && !runs("ip", ["-V"])) return "iproute2 (ip) is not installed: each manifest runs in a network namespace of its own";
  if (needs.busybox && !existsSync("/bin/busybox")) return "/bin/busybox is missing: the stand-in app is busybox httpd (Debian's busybox-static)";
  if (!existsSync(imageArchive(process.arch))) return `dist/readiness-proxy-image-linux-${process.arch}.tar is not built: run make image`;
  return false;
}

/** A bounded wait: `probe` until it returns a value, every 50 ms, at most `timeoutMs`. */
export async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export interface Podman {
  /** podman with this storage and the machine's needs; `wrapper` runs it elsewhere (e.g. nsenter into a netns). */
  run(args: readonly string[], options?: { wrapper?: readonly string[]; timeoutMs?: number }): Promise<Result>;
  /** The same, failing the test's promise when podman exits non-zero; returns stdout trimmed. */
  must(args: readonly string[], options?: { wrapper?: readonly string[]; timeoutMs?: number }): Promise<string>;
  /** The container's stdout as pino records (stderr lines are kept apart). */
  logs(container: string): Promise<{ records: LogRecord[]; stderr: string }>;
  /** The exit code podman recorded for a stopped container. */
  exitCode(container: string): Promise<number>;
  /** The image's archive loaded into this storage, once: its name. */
  loadImage(): Promise<string>;
}

/**
 * A podman storage for one test file: graph and run roots, libpod's temp dir and a containers.conf
 * under a temp dir, all removed (containers and pods first) when the test ends. What this machine
 * needs, found by trial: `default_ulimits = []` (crun and runc fail on setrlimit otherwise), runc
 * (crun refuses the hybrid cgroups), vfs storage, cgroupfs and file events (no systemd), and
 * `--network host` on every run (the tests pass it).
 */
export function startPodman(t: Test): Podman {
  const dir = mkdtempSync(join(tmpdir(), "rp-podman-"));
  writeFileSync(join(dir, "containers.conf"), "[containers]\ndefault_ulimits = []\n");
  const global = [
    "--root", join(dir, "root"),
    "--runroot", join(dir, "run"),
    "--tmpdir", join(dir, "libpod"),
    "--storage-driver", "vfs",
    "--runtime", "runc",
    "--cgroup-manager", "cgroupfs",
    "--events-backend", "file",
  ];
  const env = { PATH: process.env.PATH, CONTAINERS_CONF: join(dir, "containers.conf") };
  const run: Podman["run"] = (args, options = {}) =>
    new Promise((resolve) => {
      const argv = [...(options.wrapper ?? []), "podman", ...global, ...args];
      const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ["ignore", "pipe", "pipe"], timeout: options.timeoutMs ?? 60_000 });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      child.on("close", (code) => resolve({ code, stdout, stderr }));
    });
  const must: Podman["must"] = async (args, options) => {
    const result = await run(args, options);
    if (result.code !== 0) throw new Error(`podman ${args.join(" ")}: exit ${result.code}\n${result.stderr}`);
    return result.stdout.trim();
  };
  let loaded: Promise<string> | undefined;
  t.teardown(async () => {
    await run(["pod", "rm", "--all", "--force", "--time", "0"]);
    await run(["rm", "--all", "--force", "--time", "0"]);
    // podman's cleanup process (conmon's exit hook) can still be writing under the root a moment
    // after `rm` returns: ENOTEMPTY then, seen once in a CI run; rmSync retries it.
    rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  });
  return {
    run,
    must,
    async logs(container) {
      const result = await run(["logs", container]);
      const records = result.stdout.split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as LogRecord);
      return { records, stderr: result.stderr };
    },
    async exitCode(container) {
      return Number(await must(["inspect", "--format", "{{.State.ExitCode}}", container]));
    },
    loadImage() {
      loaded ??= must(["load", "--quiet", "--input", imageArchive(process.arch)]).then((out) => {
        if (!out.includes(IMAGE)) throw new Error(`podman load named it otherwise: ${out}`);
        return IMAGE;
      });
      return loaded;
    },
  };
}

/** The `msg` of each record, in order. */
export const messages = (records: readonly LogRecord[]) => records.map((record) => record.msg);
