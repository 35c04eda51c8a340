// The tests' TypeScript loaded by the runtime itself (tap with TAP_TYPE_STRIP_ONLY=1, the Makefile's TAP) rather than ts-node: a relative `./x.js` import of a .ts file names x.ts.
// ts-node loads the TypeScript compiler into every test process, about 0.9 s of CPU per test file
// (cli.test.ts: 2.8 against 1.9 s); the runtime strips the types (--experimental-transform-types
// for the few parameter properties) with no compiler at all. tsc still checks every type (make lint).
import { existsSync } from "node:fs";
import { enableCompileCache, registerHooks } from "node:module";
import { fileURLToPath } from "node:url";

// Each test file is its own process, which strips and compiles all of src/ and tap again (~0.5 s
// of CPU a file): in `make test-unit` (TEST_TIER=unit, no coverage) Node's compile cache keeps
// both, the stripped TypeScript and V8's code, keyed by each file's content. Not under `make
// test`'s coverage: V8's coverage is less precise in functions read from the cache (Node's docs).
if (process.env.TEST_TIER === "unit") enableCompileCache(fileURLToPath(new URL("../node_modules/.cache/test-compile-cache", import.meta.url)));

registerHooks({
  resolve(specifier, context, nextResolve) {
    const parent = context.parentURL;
    if (parent?.startsWith("file:") && /\.[cm]?ts$/.test(parent) && /^\.\.?\/.*\.c?js$/.test(specifier)) {
      const asWritten = new URL(specifier, parent);
      const typescript = new URL(specifier.replace(/js$/, "ts"), parent);
      if (!existsSync(fileURLToPath(asWritten)) && existsSync(fileURLToPath(typescript))) return nextResolve(typescript.href, context);
    }
    return nextResolve(specifier, context);
  },
});
