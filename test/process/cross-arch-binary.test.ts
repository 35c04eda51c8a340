// The release binaries for the other architecture, run under qemu-user: version, health, readiness over a fixture, a proxied request, SIGTERM.
import { spawnSync } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import t from "tap";
import { send } from "../helpers/http-client.js";
import { runToExit, spawnDaemon } from "../helpers/spawn-daemon.js";
import { startUpstream } from "../helpers/upstream.js";

const root = join(import.meta.dirname, "../..");
const lockfile = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as { packages: Record<string, { version?: string }> };

/** The release architectures, with what runs one on another host: ELF e_machine, qemu and the Debian cross libraries. */
const ARCHITECTURES = [
  { arch: "x64", elfMachine: 0x3e, qemu: "qemu-x86_64-static", libraries: "/usr/x86_64-linux-gnu", debian: "amd64" },
  { arch: "arm64", elfMachine: 0xb7, qemu: "qemu-aarch64-static", libraries: "/usr/aarch64-linux-gnu", debian: "arm64" },
] as const;

function elfMachine(file: string): number {
  const header = Buffer.alloc(20);
  const fd = openSync(file, "r");
  readSync(fd, header, 0, 20, 0);
  closeSync(fd);
  return header.readUInt16LE(18);
}

for (const target of ARCHITECTURES.filter((entry) => entry.arch !== process.arch)) {
  const binary = join(root, `dist/readiness-proxy-linux-${target.arch}`);
  const skip =
    (process.platform !== "linux" && "needs Linux to run a Linux binary") ||
    (spawnSync(target.qemu, ["--version"]).status !== 0 && `${target.qemu} is not installed: Debian's qemu-user-static runs the linux-${target.arch} binary`) ||
    (!existsSync(join(target.libraries, "lib/libstdc++.so.6")) &&
      `${target.libraries} has no runtime libraries: Debian's libc6-${target.debian}-cross and libstdc++6-${target.debian}-cross`) ||
    (!existsSync(binary) && `dist/readiness-proxy-linux-${target.arch} is not built: run make release`);
  // No binfmt registration: qemu is named, with the target's glibc and libstdc++ as its root.
  const command = [target.qemu, "-L", target.libraries, binary];
  const runtimeVersion = lockfile.packages[`node_modules/node-linux-${target.arch}`]?.version;

  t.test(`the linux-${target.arch} binary, emulated by ${target.qemu}`, { skip }, async (t) => {
    t.test("is built for its architecture, embeds the pinned runtime, and its code cache is accepted", async (t) => {
      t.equal(elfMachine(binary), target.elfMachine, "ELF e_machine");
      const version = await runToExit([...command, "--version"]);
      t.equal(version.code, 0);
      t.equal(version.stdout, `readiness-proxy 0.1.0 (node v${runtimeVersion}, linux-${target.arch})\n`);
      // A blob made by another architecture's runtime prints "Warning: Code cache data rejected." here.
      t.equal(version.stderr, "", "nothing on stderr");
      t.comment(`linux-${target.arch} binary: ${(statSync(binary).size / 1e6).toFixed(1)} MB`);
    });

    t.test("serves /health, reads a fixture proc-root for /readyz, and names its architecture", async (t) => {
      const started = performance.now();
      const ready = await spawnDaemon(t, command, ["--proc-root", join(root, "proc-fixtures/listen-tcp-only"), "--readiness-required-listener", "15008"]);
      const health = await send(ready.port, "/health");
      t.comment(`start to first /health under emulation: ${(performance.now() - started).toFixed(0)} ms`);
      t.equal(health.status, 200);
      t.equal(health.text(), '{"status":"ok"}');
      t.match(ready.records[0], { msg: "listening", runtime: `v${runtimeVersion}`, arch: `linux-${target.arch}` });
      const readyz = await send(ready.port, "/readyz");
      t.equal(readyz.status, 200);
      t.equal(readyz.text(), '{"status":"ready"}');

      const missing = await spawnDaemon(t, command, ["--proc-root", join(root, "proc-fixtures/listen-tcp-only"), "--readiness-required-listener", "15008", "--readiness-required-listener", "9090"]);
      const notReady = await send(missing.port, "/readyz?verbose");
      t.equal(notReady.status, 503);
      t.equal(notReady.text(), "[-]listener-9090 failed: not listening\n[+]listener-15008 ok\n[+]shutdown ok\nreadyz check failed\n");
    });

    t.test("proxies a request with its body and X-Forwarded-For, then exits 0 on SIGTERM", async (t) => {
      const upstream = await startUpstream(t);
      upstream.handle((req, res, body) => res.end(`${req.method} ${req.url} ${body.toString()}`));
      const daemon = await spawnDaemon(t, command, ["--upstream", upstream.url]);
      const reply = await send(daemon.port, "/v1/echo?x=1", { method: "POST", body: "hello arm" });
      t.equal(reply.status, 200);
      t.equal(reply.text(), "POST /v1/echo?x=1 hello arm");
      t.equal(upstream.received[0]?.headers["x-forwarded-for"], "127.0.0.1");
      daemon.child.kill("SIGTERM");
      t.equal(await daemon.exited, 0);
      t.ok(daemon.records.some((record) => record.msg === "stopped"), "logged stopped");
    });
  });
}
