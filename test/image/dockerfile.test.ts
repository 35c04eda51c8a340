// One recipe: docs/deploy/Dockerfile, built by podman from what make image prepared, gives the same files and config as make image's archive.
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t from "tap";
import { readImage, type TarEntry } from "./oci-archive.js";
import { imageArchive, podmanUnavailable, startPodman } from "./podman.js";

const root = join(import.meta.dirname, "../..");
const debianArch = process.arch === "x64" ? "amd64" : process.arch;
const unavailable =
  podmanUnavailable() || (!existsSync(join(root, "dist/image", debianArch, "rootfs")) && `dist/image/${debianArch}/ is not there: run make image`);
// Podman on vfs storage is slow on a busy 2-core machine (app-image.test.ts took 116 s there, near
// .taprc's 120 s); every wait inside is bounded on its own.
t.setTimeout(240_000);
if (unavailable) t.comment(`skipping the Dockerfile test: ${unavailable}`);

/** What a file is, for comparing two images: type, mode, owner, link target, content hash. */
function describe(entries: ReadonlyMap<string, TarEntry>) {
  return Object.fromEntries(
    [...entries]
      .filter(([name]) => name !== "" && name !== ".")
      .map(([name, entry]) => [name.replace(/^\.\//, ""), `${entry.type} ${entry.mode.toString(8)} ${entry.uid}:${entry.gid} ${entry.linkname} ${createHash("sha256").update(entry.data).digest("hex")}`]),
  );
}

t.test("docs/deploy/Dockerfile against make image's archive", { skip: unavailable }, async (t) => {
  const podman = startPodman(t);
  const made = readImage(imageArchive(process.arch));
  const labels = made.config.config.Labels ?? {};
  const buildArgs = ["REVISION", "SOURCE"].flatMap((name) => ["--build-arg", `${name}=${labels[`org.opencontainers.image.${name.toLowerCase()}`] ?? ""}`]);
  await podman.must(["build", "--pull=never", "--quiet", ...buildArgs, "--file", join(root, "docs/deploy/Dockerfile"), "--tag", "localhost/rp-dockerfile:test", root], { timeoutMs: 180_000 });
  const dir = mkdtempSync(join(tmpdir(), "rp-dockerfile-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  await podman.must(["save", "--format", "oci-archive", "--output", join(dir, "image.tar"), "localhost/rp-dockerfile:test"], { timeoutMs: 120_000 });
  const built = readImage(join(dir, "image.tar"));

  t.equal(built.config.architecture, made.config.architecture);
  const { Labels: builtLabels = {}, ...builtConfig } = built.config.config as typeof made.config.config & Record<string, unknown>;
  const { Labels: madeLabels = {}, ...madeConfig } = made.config.config;
  t.match(builtConfig, madeConfig, "user, entrypoint, environment, exposed port");
  t.equal((builtConfig as { Cmd?: unknown }).Cmd, undefined, "no default command");
  const meaningful = (all: Record<string, string>) => Object.fromEntries(Object.entries(all).filter(([key, value]) => key.startsWith("org.opencontainers.") && value !== ""));
  t.same(meaningful(builtLabels), meaningful(madeLabels), "the same labels");
  t.same(describe(built.tree), describe(made.tree), "the same files, modes, owners and contents");
  t.equal(built.layers.length, made.layers.length, "the same layering: the Debian part, then the binary");
});
