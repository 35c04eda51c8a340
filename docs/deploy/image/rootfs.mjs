// The image's file tree but the binary, assembled in a directory from the pinned .debs: what both `make image` and the Dockerfile ship.
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, lstatSync, mkdirSync, readdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { PACKAGES } from "./debian-packages.mjs";

/** The one user: distroless's "nonroot" uid and gid, numeric in the image config so that runAsNonRoot can verify it. */
export const NONROOT = 65532;

const ETC_FILES = {
  "etc/passwd": `root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:${NONROOT}:${NONROOT}:nonroot:/home/nonroot:/sbin/nologin\n`,
  "etc/group": `root:x:0:\nnonroot:x:${NONROOT}:\n`,
  // glibc's lookups without nsswitch.conf try DNS before /etc/hosts; an upstream named localhost must not.
  "etc/nsswitch.conf": "passwd: files\ngroup: files\nhosts: files dns\n",
};

/** Every path under `dir` (files and symlinks, not directories), relative, sorted. */
function walk(dir, prefix = "") {
  return readdirSync(join(dir, prefix), { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .flatMap((entry) => {
      const path = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
      return entry.isDirectory() ? walk(dir, path) : [path];
    });
}

/**
 * Modes as the image has them whatever the builder's umask: directories 0755 (/tmp 1777), files
 * 0755 when the package made them executable, else 0644.
 */
function normalizeModes(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) {
      chmodSync(path, 0o755);
      normalizeModes(path);
    } else {
      chmodSync(path, lstatSync(path).mode & 0o111 ? 0o755 : 0o644);
    }
  }
}

function place(from, to) {
  mkdirSync(dirname(to), { recursive: true });
  if (lstatSync(from).isSymbolicLink()) symlinkSync(readlinkSync(from), to);
  else copyFileSync(from, to);
}

/**
 * Writes the image's files into `rootfs` (emptied first): from each package the paths PACKAGES keeps
 * and its copyright, dpkg's record of it (`var/lib/dpkg/status.d/<package>`, where scanners such as
 * Trivy and Grype find the versions of a distroless image), tini at /tini, the accounts and an empty
 * /tmp. (The binary is a layer of its own.) Owners are not set here: the layer, or docker's COPY,
 * makes every file root's.
 */
export function assembleRootfs({ rootfs, debs, scratchDir }) {
  rmSync(rootfs, { recursive: true, force: true });
  mkdirSync(rootfs, { recursive: true });
  for (const [index, { name, keep, rename = {} }] of PACKAGES.entries()) {
    const deb = debs[index];
    const unpacked = join(scratchDir, name);
    rmSync(unpacked, { recursive: true, force: true });
    mkdirSync(unpacked, { recursive: true });
    const extract = spawnSync("dpkg-deb", ["--extract", deb, unpacked], { encoding: "utf8" });
    if (extract.error || extract.status !== 0) throw new Error(`dpkg-deb --extract ${deb}: ${extract.error?.message ?? extract.stderr}`);
    const copyright = [`usr/share/doc/${name}/copyright`, `usr/share/doc/${name}`];
    for (const path of walk(unpacked)) {
      if (rename[path]) place(join(unpacked, path), join(rootfs, rename[path]));
      else if (keep.some((prefix) => path.startsWith(prefix)) || copyright.includes(path)) place(join(unpacked, path), join(rootfs, path));
    }
    const control = spawnSync("dpkg-deb", ["--info", deb, "control"], { encoding: "utf8" });
    if (control.status !== 0) throw new Error(`dpkg-deb --info ${deb} control: ${control.stderr}`);
    mkdirSync(join(rootfs, "var/lib/dpkg/status.d"), { recursive: true });
    writeFileSync(join(rootfs, "var/lib/dpkg/status.d", name), control.stdout);
  }
  rmSync(scratchDir, { recursive: true, force: true });
  for (const [path, text] of Object.entries(ETC_FILES)) writeFileSync(join(rootfs, path), text);
  mkdirSync(join(rootfs, "tmp"));
  normalizeModes(rootfs);
  chmodSync(join(rootfs, "tmp"), 0o1777);
}
