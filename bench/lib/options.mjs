// The benchmarks' command line: `--name value` options, read the same way by every script.

/** The value after `--name` on the command line, or `fallback` when it is not given. */
export function option(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1] : fallback;
}
