// Both image archives as a registry sees them: platform, user, entrypoint, labels, a tree of only what was pinned, no shell; the foreign one's binary started under qemu with the image's own libraries.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t from "tap";
import { readImage, unpackTree } from "./oci-archive.js";
import { imageArchive } from "./podman.js";

const root = join(import.meta.dirname, "../..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
const lock = readFileSync(join(root, "docs/deploy/image/packages.lock"), "utf8")
  .split("\n")
  .filter((line) => line !== "" && !line.startsWith("#"))
  .map((line) => line.split(" ") as [string, string, string, string]);
const head = spawnSync("git", ["rev-parse", "HEAD"], { cwd: root, encoding: "utf8" });

const TARGETS = [
  { arch: "x64", platform: { architecture: "amd64", os: "linux" }, elfMachine: 0x3e, loader: "lib64/ld-linux-x86-64.so.2", qemu: "qemu-x86_64-static" },
  { arch: "arm64", platform: { architecture: "arm64", os: "linux", variant: "v8" }, elfMachine: 0xb7, loader: "lib/ld-linux-aarch64.so.1", qemu: "qemu-aarch64-static" },
] as const;

/** Where each file of the image may come from: the pinned packages' paths, our accounts, tini, the binary. */
const ALLOWED = /^(lib|lib64|usr\/lib)\/|^usr\/share\/doc\/[^/]+(\/copyright)?$|^var\/lib\/dpkg\/status\.d\/[^/]+$|^etc\/(passwd|group|nsswitch\.conf|debian_version|os-release)$|^(tini|readiness-proxy)$/;

for (const target of TARGETS) {
  const archive = imageArchive(target.arch);
  t.test(`the linux-${target.arch} image archive`, { skip: !existsSync(archive) && `dist/readiness-proxy-image-linux-${target.arch}.tar is not built: run make image` }, async (t) => {
    const image = readImage(archive);
    const { config } = image;

    t.test("one manifest for its platform, named readiness-proxy:<version> for podman load and docker load", async (t) => {
      t.equal(image.index.manifests.length, 1);
      t.same(image.manifestDescriptor.platform, target.platform);
      t.same(image.manifestDescriptor.annotations, { "org.opencontainers.image.ref.name": pkg.version, "io.containerd.image.name": `readiness-proxy:${pkg.version}` });
      t.equal(image.manifest.mediaType, "application/vnd.oci.image.manifest.v1+json");
      t.same(image.dockerManifest, [
        { Config: `blobs/sha256/${image.manifest.config.digest.slice(7)}`, RepoTags: [`readiness-proxy:${pkg.version}`], Layers: image.manifest.layers.map((layer) => `blobs/sha256/${layer.digest.slice(7)}`) },
      ]);
      t.match(config, { architecture: target.platform.architecture, os: "linux" });
      const unpacked = image.layers.reduce((sum, layer) => sum + layer.entries.reduce((bytes, entry) => bytes + entry.data.length, 0), 0);
      t.comment(`${archive.slice(root.length + 1)}: ${(statSync(archive).size / 1e6).toFixed(1)} MB, ${(unpacked / 1e6).toFixed(1)} MB of files`);
    });

    t.test("user 65532, tini over the binary, no default command, two malloc arenas, labels", async (t) => {
      t.equal(config.config.User, "65532:65532", "numeric, so runAsNonRoot can verify it");
      t.ok(config.config.Env?.includes("MALLOC_ARENA_MAX=2"), "glibc's arenas capped: the memory peak of bench/README.md's MALLOC_ARENA_MAX");
      t.same(config.config.Entrypoint, ["/tini", "--", "/readiness-proxy"]);
      t.equal(config.config.Cmd, undefined);
      t.same(config.config.ExposedPorts, { "8080/tcp": {} });
      const labels = config.config.Labels ?? {};
      t.equal(labels["org.opencontainers.image.version"], pkg.version);
      const revision = labels["org.opencontainers.image.revision"] ?? "";
      if (head.status === 0) {
        // make image relabels after every commit (dist/image/revision); a file run alone may meet an older build.
        t.equal(spawnSync("git", ["merge-base", "--is-ancestor", revision, "HEAD"], { cwd: root }).status, 0, `revision ${revision}: this commit or an earlier one of this branch`);
        if (revision !== head.stdout.trim()) t.comment(`built at ${revision.slice(0, 12)}, before the latest commit: make image relabels it`);
      }
      const source = labels["org.opencontainers.image.source"];
      if (source === undefined) t.comment("no org.opencontainers.image.source: package.json has no repository and git no origin URL");
      else t.notMatch(source, /\/\/[^/]*@/, "no credentials in the source URL");
    });

    t.test("only pinned packages' files, tini and the binary: no shell, all root's, nothing writable but /tmp", async (t) => {
      const files = [...image.tree.values()].filter((entry) => entry.type !== "directory");
      t.same(files.filter((entry) => !ALLOWED.test(entry.name)).map((entry) => entry.name), [], "every file has a known origin");
      t.notOk([...image.tree.keys()].some((name) => /(^|\/)(sh|bash|dash|busybox)$/.test(name)), "no shell");
      t.same([...image.tree.values()].filter((entry) => entry.uid !== 0 || entry.gid !== 0).map((entry) => entry.name), [], "owned by root");
      t.same([...image.tree.values()].filter((entry) => entry.type !== "symlink" && entry.mode & 0o6022 && entry.name !== "tmp/").map((entry) => entry.name), [], "no setuid, nothing writable by others");
      t.equal(image.tree.get("tmp")?.mode, 0o1777);
      t.match(image.tree.get("etc/passwd")?.data.toString(), /^nonroot:x:65532:65532:/m);
      t.equal(image.layers.at(-1)?.entries.map((entry) => entry.name).join(), "readiness-proxy", "the binary is a layer of its own");
      for (const name of ["tini", "readiness-proxy"]) {
        const entry = image.tree.get(name)!;
        t.equal(entry.mode, 0o755);
        t.equal(entry.data.readUInt16LE(18), target.elfMachine, `${name}: ELF e_machine of linux-${target.arch}`);
      }
      t.ok(image.tree.has(target.loader), `the binary's loader /${target.loader}`);
      const debianArch = target.platform.architecture;
      for (const [arch, name, version] of lock.filter(([arch]) => arch === debianArch)) {
        t.match(image.tree.get(`var/lib/dpkg/status.d/${name}`)?.data.toString(), new RegExp(`^Version: ${version.replace(/[.+]/g, "\\$&")}$`, "m"), `${name} ${version} ${arch}, as pinned`);
      }
    });

    // This architecture's image is run by podman (run.test.ts); the other one's binary is started here.
    if (target.arch === process.arch) return;
    const qemuMissing = spawnSync(target.qemu, ["--version"]).status !== 0 && `${target.qemu} is not installed (Debian's qemu-user-static)`;
    t.test("its binary starts under qemu with the image's own libraries alone", { skip: qemuMissing }, async (t) => {
      const dir = mkdtempSync(join(tmpdir(), "rp-image-tree-"));
      t.teardown(() => rmSync(dir, { recursive: true, force: true }));
      unpackTree(image.tree, dir);
      // -L: the loader and every library are looked up in the unpacked tree (none is on this host).
      const result = spawnSync(target.qemu, ["-L", dir, join(dir, "readiness-proxy"), "--version"], { encoding: "utf8", timeout: 60_000 });
      t.equal(result.status, 0, result.stderr);
      t.match(result.stdout, `(node v`);
      t.match(result.stdout, `linux-${target.arch})`);
      const tini = spawnSync(target.qemu, ["-L", dir, join(dir, "tini"), "--version"], { encoding: "utf8", timeout: 60_000 });
      t.match(tini.stdout, /^tini version 0\.19\.0/, "tini runs (static)");
    });
  });
}
