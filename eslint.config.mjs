// ESLint over src/ test/ bench/ (make lint, after tsc): the recommended rules, and typescript-eslint's type-aware promise rules on the TypeScript.
import js from "@eslint/js";
import { defineConfig } from "eslint/config";
import globals from "globals";
import tseslint from "typescript-eslint";

export default defineConfig(
  { ignores: ["dist/", "node_modules/", "coverage/", ".tap/"] },
  {
    files: ["**/*.ts", "**/*.cts", "**/*.mts"],
    extends: [js.configs.recommended, tseslint.configs.recommended],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // A promise nobody awaits or catches loses its rejection (an unhandled rejection ends the process).
      // tap's t.test() is the exception: tap queues the subtest and reports its failures itself, and
      // the promise it returns never rejects.
      "@typescript-eslint/no-floating-promises": [
        "error",
        { allowForKnownSafePromises: [{ from: "package", name: "PromiseWithSubtest", package: "@tapjs/core" }] },
      ],
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/await-thenable": "error",
      // The house convention for a parameter or binding kept for its position or to leave it out of a rest.
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrorsIgnorePattern: "^_", ignoreRestSiblings: true },
      ],
      // prom-client calls collect() with the metric as `this`, and the closures inside need the outer one.
      "@typescript-eslint/no-this-alias": ["error", { allowedNames: ["self"] }],
      // `import x = require(...)` is how a .cts file imports a CommonJS module with its types.
      "@typescript-eslint/no-require-imports": ["error", { allowAsImport: true }],
      // A `let` declared before a closure that reads it and assigned after (the closure may run first, and must see undefined).
      "prefer-const": ["error", { ignoreReadBeforeAssign: true }],
      // Control characters in a regular expression are what the header and name rules refuse, on purpose.
      "no-control-regex": "off",
    },
  },
  {
    // Tests read YAML manifests and JSON of any shape.
    files: ["test/**/*.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
  {
    files: ["**/*.mjs", "**/*.cjs", "**/*.js"],
    extends: [js.configs.recommended],
    languageOptions: { globals: globals.node },
    rules: {
      "no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
      "no-empty": ["error", { allowEmptyCatch: true }],
    },
  },
);
