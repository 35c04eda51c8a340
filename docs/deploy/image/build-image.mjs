// make image and make image-lock: the image of one architecture from the release binary and the pinned Debian packages, no registry, no container engine.
//   node docs/deploy/image/build-image.mjs image --arch x64 --binary dist/readiness-proxy-linux-x64 --output dist/readiness-proxy-image-linux-x64.tar
//   node docs/deploy/image/build-image.mjs lock     (re-pins every package to the mirror's current version)
//   node docs/deploy/image/build-image.mjs config   (the image config as JSON: what docs/deploy/Dockerfile must match)
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, linkSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createApt, DEBIAN_ARCH, fetchPinned, pinsFor, readLock, writeLock } from "./debian-packages.mjs";
import { createLayout, treeEntries } from "./oci-archive.mjs";
import { assembleRootfs, NONROOT } from "./rootfs.mjs";

const root = join(import.meta.dirname, "../../..");
const LOCK = join(root, "docs/deploy/image/packages.lock");
const WORK = join(root, "dist/image");
const PLATFORMS = { x64: { architecture: "amd64", os: "linux" }, arm64: { architecture: "arm64", os: "linux", variant: "v8" } };

function git(...args) {
  const result = spawnSync("git", args, { cwd: root, encoding: "utf8" });
  return result.status === 0 ? result.stdout.trim() : undefined;
}

/** Where the source lives: IMAGE_SOURCE, else package.json's repository, else git's origin when it is a URL (credentials removed). */
function sourceUrl(pkg) {
  const candidates = [process.env.IMAGE_SOURCE, typeof pkg.repository === "string" ? pkg.repository : pkg.repository?.url, git("remote", "get-url", "origin")];
  const url = candidates.find((value) => value && /^([a-z][a-z0-9+.-]*:\/\/|[\w.-]+@[\w.-]+:)/i.test(value));
  return url?.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, "$1");
}

/** The image's runtime config: the same for both architectures; what docs/deploy/Dockerfile must say too. */
function imageConfig() {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const source = sourceUrl(pkg);
  const revision = git("rev-parse", "HEAD");
  return {
    User: `${NONROOT}:${NONROOT}`,
    // Two glibc malloc arenas instead of one per thread (8 per core): V8's worker threads each
    // kept an arena of what their compiler and GC jobs had freed. Under issue 38's h2 soak the
    // anonymous peak fell from 57-67 to 49-50 MB (at 256 MiB) and the 64 MiB cgroup held in 4
    // runs of 5 (2 of 3 without), at about the same CPU per request (bench/README.md,
    // "MALLOC_ARENA_MAX").
    Env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "MALLOC_ARENA_MAX=2"],
    // tini as PID 1 reaps orphans and passes signals to readiness-proxy alone (never -g: the app
    // must hear SIGTERM from readiness-proxy after the drain, not from tini at the same moment).
    Entrypoint: ["/tini", "--", "/readiness-proxy"],
    ExposedPorts: { "8080/tcp": {} },
    Labels: {
      ...(source && { "org.opencontainers.image.source": source }),
      "org.opencontainers.image.version": pkg.version,
      ...(revision && { "org.opencontainers.image.revision": revision }),
      "org.opencontainers.image.title": "readiness-proxy",
      "org.opencontainers.image.description": pkg.description,
      "org.opencontainers.image.licenses": pkg.license,
    },
  };
}

async function buildImage({ arch, binary, output }) {
  const platform = PLATFORMS[arch];
  const debianArch = DEBIAN_ARCH[arch];
  if (!platform || !debianArch) throw new Error(`--arch: expected x64 or arm64, got "${arch}"`);
  const started = Date.now();
  const apt = createApt(join(WORK, "apt"));
  const pins = pinsFor(readLock(LOCK), debianArch, "docs/deploy/image/packages.lock");
  const debs = fetchPinned(pins, { apt, debDir: join(WORK, "debs") });
  // What docs/deploy/Dockerfile copies, named by Docker's architecture (its TARGETARCH): the
  // tree (dist/image/amd64/rootfs/) and the binary beside it, hard-linked, one layer each.
  const work = join(WORK, debianArch);
  const rootfs = join(work, "rootfs");
  assembleRootfs({ rootfs, debs, scratchDir: join(work, "unpack") });
  const binaryCopy = join(work, "readiness-proxy");
  rmSync(binaryCopy, { force: true });
  try {
    linkSync(binary, binaryCopy); // 105 MB not copied
  } catch {
    copyFileSync(binary, binaryCopy);
  }
  chmodSync(binaryCopy, 0o755);

  const layout = createLayout(join(work, "oci"));
  // Two layers: the Debian part changes with the lock, the binary with every release.
  const base = await layout.addLayer(treeEntries(rootfs));
  const app = await layout.addLayer([{ name: "readiness-proxy", path: binaryCopy }]);
  const config = imageConfig();
  const created = new Date(Number(git("log", "-1", "--format=%ct") ?? 0) * 1000).toISOString();
  const packages = pins.map((pin) => `${pin.name}=${pin.version}`).join(" ");
  layout.finish({
    config: {
      created,
      architecture: platform.architecture,
      os: platform.os,
      ...(platform.variant && { variant: platform.variant }),
      config,
      history: [
        { created, created_by: `make image: Debian ${debianArch} ${packages} (docs/deploy/image/packages.lock)`, comment: "libraries, tini, accounts" },
        { created, created_by: `make image: /readiness-proxy from dist/readiness-proxy-linux-${arch}` },
      ],
    },
    layers: [base, app],
    platform,
    refName: `readiness-proxy:${config.Labels["org.opencontainers.image.version"]}`,
  });
  await layout.writeArchive(output);
  const megabytes = (bytes) => (bytes / 1e6).toFixed(1);
  console.log(
    `built ${output}: ${megabytes(statSync(output).size)} MB (layers ${megabytes(base.descriptor.size)} + ${megabytes(app.descriptor.size)} MB gzip; ` +
      `binary ${megabytes(statSync(binary).size)} MB unpacked) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  if (!config.Labels["org.opencontainers.image.source"]) {
    console.log("note: no org.opencontainers.image.source label: set IMAGE_SOURCE, or repository in package.json");
  }
}

const { positionals, values } = parseArgs({ allowPositionals: true, options: { arch: { type: "string" }, binary: { type: "string" }, output: { type: "string" } } });
try {
  switch (positionals[0]) {
    case "image":
      if (!values.arch || !values.binary || !values.output) throw new Error("image needs --arch, --binary and --output");
      await buildImage({ arch: values.arch, binary: values.binary, output: values.output });
      break;
    case "lock":
      for (const line of writeLock(LOCK, { apt: createApt(join(WORK, "apt")), debDir: join(WORK, "debs") })) console.log(`pinned ${line}`);
      break;
    case "config":
      console.log(JSON.stringify(imageConfig(), null, 2));
      break;
    default:
      throw new Error(`expected a command: image, lock or config; got "${positionals[0] ?? ""}"`);
  }
} catch (error) {
  console.error(`error: ${error instanceof Error ? error.message : error}`);
  process.exitCode = 1;
}
