// Stands in for node:worker_threads in the bundle, for the one thing pino reads from it when loaded: isMainThread, always true for this program.

/**
 * pino's lib/tools.js reads isMainThread when pino is loaded (an asynchronous destination gets
 * its exit flush only on the main thread). node:worker_threads, with the worker, messaging and
 * locks modules behind it, is ~1 ms of every start. The bundle is only ever a process's main
 * program (the SEA's main script, or `node dist/readiness-proxy.cjs`): main.ts takes the
 * process's signals and calls process.exit, which no worker could. esbuild maps the bare
 * `worker_threads` here (Makefile: --alias; thread-stream, its other user, is shimmed out too);
 * undici's `node:worker_threads` is not mapped. Nothing else is exported: any other use fails.
 */
export const isMainThread = true;
