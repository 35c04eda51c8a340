// The program's version, kept equal to package.json's by a test (a JSON import would complicate the bundle).

export const VERSION = "0.1.0";

/** The platform this process runs on, as release binaries are named: `linux-x64`, `linux-arm64`. */
export function platformName(): string {
  return `${process.platform}-${process.arch}`;
}

/** What `--version` prints: ours, the runtime's and the architecture, so a binary tells what it embeds and is built for. */
export function versionLine(): string {
  return `readiness-proxy ${VERSION} (node ${process.version}, ${platformName()})`;
}
