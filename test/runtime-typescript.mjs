// The tests' TypeScript loaded by the runtime itself (tap with TAP_TYPE_STRIP_ONLY=1, the Makefile's TAP) rather than ts-node: a relative `./x.js` import of a .ts file names x.ts.
// ts-node loads the TypeScript compiler into every test process, about 0.9 s of CPU per test file
// (cli.test.ts: 2.8 against 1.9 s); the runtime strips the types (--experimental-transform-types
// for the few parameter properties) with no compiler at all. tsc still checks every type (make lint).
import { existsSync } from "node:fs";
import { registerHooks } from "node:module";
import { fileURLToPath } from "node:url";

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
