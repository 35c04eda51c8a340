// Reads an OCI image archive as a registry or `podman load` would: index, manifest, config, and each layer's entries.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { gunzipSync } from "node:zlib";

export interface TarEntry {
  readonly name: string;
  readonly type: "file" | "directory" | "symlink" | "other";
  readonly mode: number;
  readonly uid: number;
  readonly gid: number;
  readonly linkname: string;
  readonly data: Buffer;
}

const field = (block: Buffer, offset: number, length: number) => block.subarray(offset, offset + length).toString("utf8").replace(/\0.*$/s, "");
const octal = (block: Buffer, offset: number, length: number) => parseInt(field(block, offset, length).trim() || "0", 8);

/** The entries of a ustar stream (what our layers and archive use). */
export function readTar(tar: Buffer): TarEntry[] {
  const entries: TarEntry[] = [];
  for (let offset = 0; offset + 512 <= tar.length; ) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((byte) => byte === 0)) break;
    const size = octal(header, 124, 12);
    const prefix = field(header, 345, 155);
    const name = (prefix ? `${prefix}/` : "") + field(header, 0, 100);
    const flag = field(header, 156, 1);
    const type = flag === "5" ? "directory" : flag === "2" ? "symlink" : flag === "0" || flag === "" ? "file" : "other";
    const data = tar.subarray(offset + 512, offset + 512 + size);
    // Go's archive/tar (buildah, docker) keeps the file type bits in the mode; the permissions are what count.
    entries.push({ name, type, mode: octal(header, 100, 8) & 0o7777, uid: octal(header, 108, 8), gid: octal(header, 116, 8), linkname: field(header, 157, 100), data });
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  return entries;
}

export interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
  readonly platform?: { architecture: string; os: string; variant?: string };
  readonly annotations?: Record<string, string>;
}

export interface ImageConfig {
  readonly architecture: string;
  readonly os: string;
  readonly variant?: string;
  readonly created: string;
  readonly config: {
    User?: string;
    Entrypoint?: string[];
    Cmd?: string[];
    Env?: string[];
    ExposedPorts?: Record<string, object>;
    Labels?: Record<string, string>;
  };
  readonly rootfs: { type: string; diff_ids: string[] };
}

/** An archive's image, every blob checked against its digest and size, and every layer read against its diff_id (all, or the first `layers`). */
export function readImage(file: string, options: { layers?: number } = {}) {
  const files = new Map(readTar(readFileSync(file)).map((entry) => [entry.name, entry]));
  const blob = (descriptor: Descriptor) => {
    const data = files.get(`blobs/sha256/${descriptor.digest.replace(/^sha256:/, "")}`)?.data;
    if (!data) throw new Error(`${file}: no blob ${descriptor.digest}`);
    if (data.length !== descriptor.size) throw new Error(`${descriptor.digest}: ${data.length} bytes, descriptor says ${descriptor.size}`);
    if (`sha256:${createHash("sha256").update(data).digest("hex")}` !== descriptor.digest) throw new Error(`${descriptor.digest}: content does not match`);
    return data;
  };
  const json = <T>(name: string) => JSON.parse(files.get(name)?.data.toString("utf8") ?? "null") as T;
  const index = json<{ schemaVersion: number; manifests: Descriptor[] }>("index.json");
  const manifestDescriptor = index.manifests[0]!;
  const manifest = JSON.parse(blob(manifestDescriptor).toString("utf8")) as { mediaType: string; config: Descriptor; layers: Descriptor[] };
  const config = JSON.parse(blob(manifest.config).toString("utf8")) as ImageConfig;
  const layers = manifest.layers.slice(0, options.layers).map((descriptor, position) => {
    const tar = descriptor.mediaType.endsWith("+gzip") ? gunzipSync(blob(descriptor)) : blob(descriptor);
    const diffId = `sha256:${createHash("sha256").update(tar).digest("hex")}`;
    if (diffId !== config.rootfs.diff_ids[position]) throw new Error(`layer ${position}: diff_id ${diffId}, config says ${config.rootfs.diff_ids[position]}`);
    return { descriptor, entries: readTar(tar) };
  });
  return {
    files,
    index,
    manifestDescriptor,
    manifest,
    config,
    layers,
    /** The image's files: every layer's entries, later layers over earlier ones. */
    tree: new Map(layers.flatMap((layer) => layer.entries).map((entry) => [entry.name.replace(/\/$/, ""), entry])),
    dockerManifest: json<Array<{ Config: string; RepoTags: string[]; Layers: string[] }>>("manifest.json"),
  };
}

/** Writes an image's files under `dir` (those `include` selects), as a container's root would hold them. */
export function unpackTree(tree: ReadonlyMap<string, TarEntry>, dir: string, include: (name: string) => boolean = () => true) {
  for (const [name, entry] of tree) {
    if (!include(name)) continue;
    const path = join(dir, name);
    if (entry.type === "directory") mkdirSync(path, { recursive: true, mode: entry.mode });
    else {
      mkdirSync(dirname(path), { recursive: true });
      if (entry.type === "symlink") symlinkSync(entry.linkname, path);
      else writeFileSync(path, entry.data, { mode: entry.mode });
    }
  }
}
