// The Debian packages the image is made of: the lock file of pins, and apt-get fetching exactly those .debs, each checked before use.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * What each package gives the image: the paths under `keep` (prefixes inside the package), those
 * under `rename` at another place, and always its copyright.
 */
export const PACKAGES = [
  { name: "libc6", keep: ["lib/", "lib64/"] }, // the dynamic loader, libc, libm, libdl, libpthread; not gconv
  { name: "libgcc-s1", keep: ["lib/"] },
  { name: "libstdc++6", keep: ["usr/lib/"] }, // libstdc++.so.6 only: no gdb printers
  { name: "gcc-12-base", keep: [] }, // the copyright that libgcc-s1 and libstdc++6 point to
  { name: "tini", keep: [], rename: { "usr/bin/tini-static": "tini" } }, // the static build: /tini needs no library
  { name: "base-files", keep: ["etc/debian_version", "etc/os-release", "usr/lib/os-release"] }, // scanners read the release here
];

/** Node's architecture names (ours, in file names) to Debian's. */
export const DEBIAN_ARCH = { x64: "amd64", arm64: "arm64" };

const LOCK_HEADER = `# The Debian packages in the image (docs/deploy/image/debian-packages.mjs says which files of each).
# One line per package and architecture: <debian-arch> <package> <version> <sha256 of the .deb>.
# \`make image\` downloads exactly these (apt-get download) and refuses a .deb whose sha256 differs.
# Only \`make image-lock\` changes this file: it pins each package's current candidate, on purpose.
`;

/**
 * @typedef {{ arch: string, name: string, version: string, sha256: string }} Pin
 */

/** The pins of a lock file, checked for form: every line four fields, a version, a sha256. */
export function readLock(file) {
  /** @type {Pin[]} */
  const pins = [];
  for (const [index, line] of readFileSync(file, "utf8").split("\n").entries()) {
    if (line.trim() === "" || line.startsWith("#")) continue;
    const [arch, name, version, sha256, extra] = line.trim().split(/\s+/);
    if (extra !== undefined || !arch || !name || !version || !/^[0-9a-f]{64}$/.test(sha256 ?? "")) {
      throw new Error(`${file}:${index + 1}: expected "<debian-arch> <package> <version> <sha256>", got "${line}"`);
    }
    pins.push({ arch, name, version, sha256: /** @type {string} */ (sha256) });
  }
  return pins;
}

/** The lock's pins for one Debian architecture, in PACKAGES order; a package missing from the lock is an error. */
export function pinsFor(pins, debianArch, lockFile) {
  return PACKAGES.map(({ name }) => {
    const pin = pins.find((entry) => entry.arch === debianArch && entry.name === name);
    if (!pin) throw new Error(`${lockFile} pins no ${name} for ${debianArch}: run make image-lock`);
    return pin;
  });
}

/**
 * apt-get and apt-cache with a private state under `stateDir`: their own package lists, with both
 * architectures, so that neither dpkg's foreign architectures nor the system's lists are touched
 * (and no root is needed). The sources are the machine's own. Each call reads every list (about a
 * second), so packages are asked for all at once.
 */
export function createApt(stateDir) {
  const options = [
    "-q",
    "-o", `Dir::State::Lists=${join(stateDir, "lists")}`,
    "-o", `Dir::Cache=${join(stateDir, "cache")}`,
    "-o", "APT::Architectures::=amd64",
    "-o", "APT::Architectures::=arm64",
    // apt drops to the _apt user to download; it could not write into dist/ (as root it warns, then works).
    "-o", "APT::Sandbox::User=root",
  ];
  let updated = false;
  const run = (command, args, cwd) => {
    const result = spawnSync(command, [...options, ...args], { cwd, encoding: "utf8" });
    if (result.error) throw new Error(`${command}: ${result.error.message} (make image needs Debian's apt)`);
    return result;
  };
  const update = () => {
    for (const dir of ["lists/partial", "cache/archives/partial"]) mkdirSync(join(stateDir, dir), { recursive: true });
    console.log("apt-get update (package lists for amd64 and arm64, kept in dist/image/apt)");
    const result = run("apt-get", ["update"]);
    if (result.status !== 0) throw new Error(`apt-get update failed:\n${result.stderr}`);
    updated = true;
  };
  const ensureLists = () => {
    if (!existsSync(join(stateDir, "lists/lock"))) update();
  };
  return {
    update,
    /** Downloads every `{ name, arch, version }` into `dir`; when the lists lack one, they are updated once and it is tried again. */
    download(pins, dir) {
      ensureLists();
      const specs = pins.map((pin) => `${pin.name}:${pin.arch}=${pin.version}`);
      for (;;) {
        const result = run("apt-get", ["download", ...specs], dir);
        if (result.status === 0) return;
        if (updated) {
          throw new Error(
            `apt-get download ${specs.join(" ")}:\n${result.stderr.trim()}\n` +
              "A pinned version the package mirror no longer offers: make image-lock pins the current ones (a deliberate change, reviewed like any other).",
          );
        }
        update();
      }
    },
    /** The version apt would install now (the candidate) of each `name:arch`. */
    candidates(specs) {
      ensureLists();
      const result = run("apt-cache", ["show", "--no-all-versions", ...specs]);
      if (result.status !== 0) throw new Error(`apt-cache show ${specs.join(" ")}:\n${result.stderr}`);
      return result.stdout.split(/\n\n+/).filter((paragraph) => paragraph.trim() !== "").map((paragraph) => {
        const field = (name) => new RegExp(`^${name}: (.+)$`, "m").exec(paragraph)?.[1] ?? "";
        return { name: field("Package"), arch: field("Architecture"), version: field("Version") };
      });
    },
  };
}

function sha256Of(file) {
  return createHash("sha256").update(readFileSync(file)).digest("hex");
}

const debName = (pin) => `${pin.name}_${pin.version.replace(/:/g, "%3a")}_${pin.arch}.deb`;

/** dpkg-deb's view of a .deb's own control fields. */
function controlOf(deb) {
  const result = spawnSync("dpkg-deb", ["--field", deb, "Package", "Version", "Architecture"], { encoding: "utf8" });
  if (result.error || result.status !== 0) throw new Error(`dpkg-deb --field ${deb}: ${result.error?.message ?? result.stderr}`);
  return Object.fromEntries(result.stdout.trim().split("\n").map((line) => line.split(": ")));
}

/**
 * The .deb of each pin, in `debDir`: one already there with the pinned sha256 is used as it is; the
 * others are downloaded by apt-get (which checks them against the signed lists), then each is
 * checked against its pin (sha256, and its own name, version and architecture) before use.
 * A pin without sha256 (only make image-lock makes one) takes what apt verified.
 */
export function fetchPinned(pins, { apt, debDir }) {
  mkdirSync(debDir, { recursive: true });
  const present = (pin) => existsSync(join(debDir, debName(pin))) && pin.sha256 !== undefined && sha256Of(join(debDir, debName(pin))) === pin.sha256;
  const missing = pins.filter((pin) => !present(pin));
  if (missing.length > 0) {
    const scratch = mkdtempSync(join(debDir, ".download-"));
    try {
      apt.download(missing, scratch);
      for (const pin of missing) {
        const file = join(scratch, debName(pin));
        if (!existsSync(file)) throw new Error(`apt-get download did not write ${debName(pin)}`);
        const actual = sha256Of(file);
        if (pin.sha256 !== undefined && actual !== pin.sha256) throw new Error(`${debName(pin)}: sha256 ${actual}, the lock pins ${pin.sha256}`);
        const control = controlOf(file);
        if (control.Package !== pin.name || control.Version !== pin.version || control.Architecture !== pin.arch) {
          throw new Error(`${debName(pin)} says it is ${control.Package} ${control.Version} ${control.Architecture}`);
        }
        renameSync(file, join(debDir, debName(pin)));
      }
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }
  return pins.map((pin) => join(debDir, debName(pin)));
}

/** Writes a new lock: every package's current candidate for each architecture, downloaded to take its sha256. */
export function writeLock(file, { apt, debDir }) {
  apt.update();
  const wanted = Object.values(DEBIAN_ARCH).flatMap((arch) => PACKAGES.map(({ name }) => ({ name, arch })));
  const found = apt.candidates(wanted.map(({ name, arch }) => `${name}:${arch}`));
  const pins = wanted.map(({ name, arch }) => {
    const candidate = found.find((entry) => entry.name === name && entry.arch === arch);
    if (!candidate) throw new Error(`apt-cache has no candidate for ${name}:${arch}`);
    return candidate;
  });
  const debs = fetchPinned(pins, { apt, debDir });
  const lines = pins.map((pin, index) => `${pin.arch} ${pin.name} ${pin.version} ${sha256Of(/** @type {string} */ (debs[index]))}`);
  writeFileSync(file, LOCK_HEADER + lines.join("\n") + "\n");
  return lines;
}
