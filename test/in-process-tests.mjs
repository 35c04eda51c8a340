// Prints the test files of the fast tier (make test-unit): those whose own code and test/ imports never reach node:child_process.
// The rule is computed, not listed, so a new test lands in the right tier by what it imports: a test
// that spawns the daemon, the binary, or a peer (curl, python3, h2load, promtool, go, chromium) does it
// through child_process (or playwright-core), directly or through a helper under test/. Imports of
// src/ are not followed: the daemon in-process imports the entrypoint form's app launcher, which a
// test uses only by passing an app command (those tests spawn a helper app through test/helpers/).
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

// node:child_process, or a package whose work is a process it starts (playwright-core: a browser).
const SPAWNS = /\b(?:from\s+|require\(\s*|import\(\s*)["'](?:node:)?child_process["']|\b(?:from\s+|require\(\s*|import\(\s*)["']playwright-core["']/;
const LOCAL_IMPORT = /\b(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g;

const TESTS = resolve("test") + "/";
const spawning = new Map();
function reachesChildProcess(file, seen = new Set()) {
  if (spawning.has(file)) return spawning.get(file);
  if (seen.has(file)) return false;
  seen.add(file);
  let source;
  try {
    source = readFileSync(file, "utf8");
  } catch {
    return false; // not a file we can read (a data file or a directory import): nothing it runs
  }
  let result = SPAWNS.test(source);
  for (const [, target] of source.matchAll(LOCAL_IMPORT)) {
    if (result) break;
    // TypeScript sources import each other by their .js name.
    const path = resolve(dirname(file), target.replace(/\.js$/, ".ts").replace(/\.cjs$/, ".cts"));
    if (!path.startsWith(TESTS)) continue;
    result = reachesChildProcess(path, seen);
  }
  spawning.set(file, result);
  return result;
}

function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith(".test.ts") ? [path] : [];
  });
}

const inProcess = testFiles("test").filter((file) => !reachesChildProcess(resolve(file)));
process.stdout.write(inProcess.sort().join("\n") + "\n");
