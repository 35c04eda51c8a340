// An OCI image written directly: layers as tar + gzip, config, manifest and index as JSON, all content-addressed by sha256; then one archive file.
import { createHash } from "node:crypto";
import { createReadStream, createWriteStream, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable, Transform, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";

const MEDIA = {
  manifest: "application/vnd.oci.image.manifest.v1+json",
  config: "application/vnd.oci.image.config.v1+json",
  layer: "application/vnd.oci.image.layer.v1.tar+gzip",
};
const BLOCK = 512;

function octal(value, width) {
  return value.toString(8).padStart(width - 1, "0") + "\0";
}

/** One ustar header: owner root, mtime 0, so that a layer's bytes depend on its files alone. */
function tarHeader({ name, mode, size = 0, type, linkname = "" }) {
  const header = Buffer.alloc(BLOCK);
  let prefix = "";
  let base = name;
  if (Buffer.byteLength(name) > 100) {
    const cut = name.lastIndexOf("/", name.length - 2);
    [prefix, base] = [name.slice(0, cut), name.slice(cut + 1)];
    if (cut < 0 || Buffer.byteLength(base) > 100 || Buffer.byteLength(prefix) > 155) throw new Error(`path too long for ustar: ${name}`);
  }
  header.write(base, 0, 100);
  header.write(octal(mode, 8), 100);
  header.write(octal(0, 8), 108); // uid
  header.write(octal(0, 8), 116); // gid
  header.write(octal(size, 12), 124);
  header.write(octal(0, 12), 136); // mtime
  header.write("        ", 148); // the checksum counts its own field as spaces
  header.write(type, 156);
  header.write(linkname, 157, 100);
  header.write("ustar\0" + "00", 257);
  header.write("root", 265);
  header.write("root", 297);
  header.write(prefix, 345, 155);
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(octal(sum, 7) + " ", 148);
  return header;
}

/** A tar stream of `{ name, path }` entries: a file, directory (its name ends in "/") or symlink on disk. */
async function* tarStream(entries) {
  for (const entry of entries) {
    const stat = lstatSync(entry.path);
    const mode = stat.mode & 0o7777;
    if (stat.isDirectory()) yield tarHeader({ name: entry.name, mode, type: "5" });
    else if (stat.isSymbolicLink()) yield tarHeader({ name: entry.name, mode, type: "2", linkname: readlinkSync(entry.path) });
    else {
      yield tarHeader({ name: entry.name, mode, size: stat.size, type: "0" });
      yield* createReadStream(entry.path);
      yield Buffer.alloc((BLOCK - (stat.size % BLOCK)) % BLOCK);
    }
  }
  yield Buffer.alloc(2 * BLOCK);
}

/** The entries of a directory tree for tarStream, sorted by name, directories before what they hold. */
export function treeEntries(root, include = () => true, prefix = "") {
  return readdirSync(join(root, prefix), { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .flatMap((entry) => {
      const name = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
      if (!include(name)) return [];
      const path = join(root, name);
      return entry.isDirectory() ? [{ name: `${name}/`, path }, ...treeEntries(root, include, name)] : [{ name, path }];
    });
}

function hashing(hash, count = () => {}) {
  return new Transform({
    transform(chunk, _encoding, done) {
      hash.update(chunk);
      count(chunk.length);
      done(null, chunk);
    },
  });
}

const sha256 = (bytes) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

/**
 * An OCI image layout directory (`oci-layout`, `index.json`, `blobs/sha256/`), written in place:
 * a layer whose uncompressed bytes are unchanged keeps its blob (the binary's 105 MB are not
 * compressed again for a new label), and blobs no longer referenced are removed.
 */
export function createLayout(dir) {
  const blobs = join(dir, "blobs/sha256");
  mkdirSync(blobs, { recursive: true });
  const cacheFile = join(dir, "layers.json");
  /** @type {Record<string, { mediaType: string, digest: string, size: number }>} diff_id -> descriptor */
  const cache = existsSync(cacheFile) ? JSON.parse(readFileSync(cacheFile, "utf8")) : {};
  const writeBlob = (bytes, mediaType) => {
    const digest = sha256(bytes);
    writeFileSync(join(blobs, digest.slice("sha256:".length)), bytes);
    return { mediaType, digest, size: bytes.length };
  };
  return {
    /** A gzip layer of `entries`: its descriptor and diff_id (the sha256 of the tar before compression). */
    async addLayer(entries) {
      const diff = createHash("sha256");
      await pipeline(Readable.from(tarStream(entries)), hashing(diff), new Writable({ write: (_chunk, _encoding, done) => done() }));
      const diffId = `sha256:${diff.digest("hex")}`;
      const cached = cache[diffId];
      if (cached && existsSync(join(blobs, cached.digest.slice("sha256:".length)))) return { diffId, descriptor: cached };
      const digest = createHash("sha256");
      let size = 0;
      const temp = join(blobs, ".layer.tmp");
      await pipeline(Readable.from(tarStream(entries)), createGzip(), hashing(digest, (length) => (size += length)), createWriteStream(temp));
      const hex = digest.digest("hex");
      renameSync(temp, join(blobs, hex));
      cache[diffId] = { mediaType: MEDIA.layer, digest: `sha256:${hex}`, size };
      return { diffId, descriptor: cache[diffId] };
    },
    /** Config, manifest and index for these layers; returns the manifest's descriptor. */
    finish({ config, layers, platform, refName }) {
      const configBlob = writeBlob(Buffer.from(JSON.stringify({ ...config, rootfs: { type: "layers", diff_ids: layers.map((layer) => layer.diffId) } })), MEDIA.config);
      const manifest = { schemaVersion: 2, mediaType: MEDIA.manifest, config: configBlob, layers: layers.map((layer) => layer.descriptor) };
      const manifestBlob = { ...writeBlob(Buffer.from(JSON.stringify(manifest)), MEDIA.manifest), platform };
      writeFileSync(join(dir, "oci-layout"), JSON.stringify({ imageLayoutVersion: "1.0.0" }));
      const annotations = { "org.opencontainers.image.ref.name": refName.split(":").at(-1), "io.containerd.image.name": refName };
      writeFileSync(join(dir, "index.json"), JSON.stringify({ schemaVersion: 2, manifests: [{ ...manifestBlob, annotations }] }));
      // What `docker load` before Docker 25 reads; later ones (and podman) read index.json.
      const dockerManifest = [{ Config: `blobs/sha256/${configBlob.digest.slice(7)}`, RepoTags: [refName], Layers: layers.map((layer) => `blobs/sha256/${layer.descriptor.digest.slice(7)}`) }];
      writeFileSync(join(dir, "manifest.json"), JSON.stringify(dockerManifest));
      const kept = new Set([configBlob, manifestBlob, ...layers.map((layer) => layer.descriptor)].map((blob) => blob.digest.slice(7)));
      for (const name of readdirSync(blobs)) if (!kept.has(name)) rmSync(join(blobs, name));
      for (const diffId of Object.keys(cache)) if (!kept.has(cache[diffId].digest.slice(7))) delete cache[diffId];
      writeFileSync(cacheFile, JSON.stringify(cache, null, 1));
      return manifestBlob;
    },
    /** The layout as one tar file (`podman load`, `docker load`), written beside `output` and renamed into place. */
    async writeArchive(output) {
      const entries = treeEntries(dir, (name) => name !== "layers.json");
      await pipeline(Readable.from(tarStream(entries)), createWriteStream(`${output}.tmp`));
      renameSync(`${output}.tmp`, output);
    },
  };
}
