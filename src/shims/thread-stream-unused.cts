// Stands in for thread-stream in the bundle: pino loads it for transports (log lines written by a worker thread), which the proxy never uses.

/**
 * pino's lib/transport.js requires thread-stream when pino is loaded, and thread-stream requires
 * node:worker_threads and node:assert, which nothing else needs at start once sonic-boom's and
 * pino's own uses are shimmed too (assert-on-failure.cts, worker-threads-main.ts).
 * Every line goes to a destination given to pino (src/logger.ts), never to a transport, and a
 * SEA could not load a transport's worker file anyway. esbuild maps thread-stream here
 * (Makefile: --alias); reaching it is a bug, so it throws.
 */
class ThreadStreamUnused {
  constructor() {
    throw new Error("pino transports are not in this build (src/shims/thread-stream-unused.cts)");
  }
}

export = ThreadStreamUnused;
