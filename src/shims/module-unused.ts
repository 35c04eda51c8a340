// Stands in for node:module in the bundle: pino's transport code requires it for createRequire, and the proxy never uses a pino transport.

/**
 * pino's lib/transport.js takes createRequire from node:module when pino is loaded, to resolve a
 * transport's target; the proxy never makes a transport (see thread-stream-unused.cts), so the
 * module would be loaded for nothing at every start. esbuild maps the bare `module` here
 * (Makefile: --alias); reaching it is a bug, so it throws.
 */
export function createRequire(): never {
  throw new Error("node:module is not in this build (src/shims/module-unused.ts)");
}
