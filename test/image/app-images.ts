// The app images the deploy docs name, built here: a glibc stand-in for python:3.12-slim whose app is busybox httpd, and docs/deploy/app-entrypoint.Dockerfile over it.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Test } from "tap";
import { readImage, unpackTree } from "./oci-archive.js";
import { imageArchive, type Podman } from "./podman.js";

const root = join(import.meta.dirname, "../..");

/** The file busybox httpd serves from /www in the stand-in, as a GET through the proxy should return it. */
export const APP_FILE = { path: "/hello.txt", text: "hello from the app behind readiness-proxy\n" };

/** busybox httpd in the foreground on `hostPort`, serving /www: the app of every test manifest. */
export const busyboxHttpd = (hostPort: string) => ["busybox", "httpd", "-f", "-p", hostPort, "-h", "/www"];

/**
 * The same as PID 1 of its own container: busybox httpd sets no SIGTERM handler, and the kernel
 * drops such a signal to a PID 1, so the stop would wait out the whole grace period. A shell that
 * traps SIGTERM ends it at once, as a real app does.
 */
export const busyboxHttpdAsPid1 = (hostPort: string) => ["busybox", "sh", "-c", `trap 'exit 0' TERM; ${busyboxHttpd(hostPort).join(" ")} & wait`];

/** A stand-in that only runs, as PID 1 of its own container, and ends at SIGTERM. */
export const busyboxIdleAsPid1 = () => ["busybox", "sh", "-c", "trap 'exit 0' TERM; while :; do sleep 3600; done & wait"];

export interface AppImages {
  /** Our image, under the name the docs' manifests and app-entrypoint.Dockerfile use. */
  readonly proxy: string;
  /** "Any app image with glibc": the Debian libraries of our own base layer, busybox and /www; no tini, no readiness-proxy. */
  readonly standIn: string;
  /** docs/deploy/app-entrypoint.Dockerfile built over the stand-in, named as deployment-entrypoint.yaml names it. */
  readonly appEntrypoint: string;
}

/**
 * Builds the images in this storage. The Dockerfile is built unchanged: its two FROM names resolve to
 * local images (our archive, tagged `registry.example/readiness-proxy:0.1.0`, and the stand-in
 * tagged `python:3.12-slim`), never pulled.
 */
export async function buildAppImages(t: Test, podman: Podman): Promise<AppImages> {
  const loaded = await podman.loadImage();
  const proxy = "registry.example/readiness-proxy:0.1.0";
  await podman.must(["tag", loaded, proxy]);

  const context = mkdtempSync(join(tmpdir(), "rp-standin-"));
  t.teardown(() => rmSync(context, { recursive: true, force: true }));
  const base = readImage(imageArchive(process.arch), { layers: 1 }).layers[0]!;
  unpackTree(new Map(base.entries.map((entry) => [entry.name.replace(/\/$/, ""), entry])), join(context, "rootfs"), (name) => name !== "tini");
  copyFileSync("/bin/busybox", join(context, "busybox"));
  mkdirSync(join(context, "www"));
  writeFileSync(join(context, "www", APP_FILE.path), APP_FILE.text);
  writeFileSync(
    join(context, "Containerfile"),
    ["FROM scratch", "COPY rootfs/ /", "COPY busybox /bin/busybox", "COPY www/ /www/", "ENV PATH=/usr/local/bin:/usr/bin:/bin", 'CMD ["busybox", "httpd", "-f", "-p", "127.0.0.1:8000", "-h", "/www"]', ""].join("\n"),
  );
  const standIn = "docker.io/library/python:3.12-slim";
  await podman.must(["build", "--pull=never", "--layers=false", "--quiet", "--tag", standIn, context], { timeoutMs: 120_000 });

  const appEntrypoint = "registry.example/model-server:1.4.2";
  const empty = join(context, "empty");
  mkdirSync(empty);
  // Not --layers=false here: with it, podman 4.3 removed the first stage's image (ours) after the build.
  await podman.must(["build", "--pull=never", "--quiet", "--file", join(root, "docs/deploy/app-entrypoint.Dockerfile"), "--tag", appEntrypoint, empty], { timeoutMs: 120_000 });
  return { proxy, standIn, appEntrypoint };
}
