// The program's version, kept equal to package.json's by a test (a JSON import would complicate the bundle).

export const VERSION = "0.1.0";

/** What `--version` prints: ours and the runtime's, so a binary tells which Node it embeds. */
export function versionLine(): string {
  return `readiness-proxy ${VERSION} (node ${process.version})`;
}
