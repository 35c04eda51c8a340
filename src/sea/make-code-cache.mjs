// Makes the single binary's code cache: compiles the wrapped bundle as the binary's loader does (src/sea/sea-loader.cts), starts the daemon to its first /health, then saves V8's cache of the script.
// Run by the runtime the binary embeds, with the binary's execArgv (V8 ignores a cache made under other flags): see the Makefile.
// usage: node <execArgv> src/sea/make-code-cache.mjs <wrapped bundle> <bundle> <output>
import { readFileSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { dirname, resolve } from "node:path";
import { Script } from "node:vm";

const [wrapped, bundle, output] = process.argv.slice(2).map((path) => resolve(path));
if (!output) {
  console.error("usage: src/sea/make-code-cache.mjs <wrapped bundle> <bundle> <output>");
  process.exit(2);
}
// Under qemu-user a start takes seconds; a start that never answers fails the build.
const TIMEOUT_MS = 120_000;
setTimeout(() => {
  console.error(`sea-code-cache: no /health 200 within ${TIMEOUT_MS / 1000} s`);
  process.exit(1);
}, TIMEOUT_MS).unref();

/** A free port on 127.0.0.1 (the start below listens there; nothing else is listening during a build). */
function freePort() {
  return new Promise((done, fail) => {
    const probe = createServer().on("error", fail);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => done(port));
    });
  });
}

function healthOk(port) {
  return new Promise((done) => {
    const req = request({ host: "127.0.0.1", port, path: "/health", agent: false }, (res) => {
      res.resume();
      res.on("end", () => done(res.statusCode === 200));
    });
    req.on("error", () => done(false));
    req.end();
  });
}

const script = new Script(readFileSync(wrapped, "latin1"), { filename: bundle });
const port = await freePort();
// The start the benchmarks time: what every start runs (the command line, the loggers, the
// daemon's wiring, the listener, the first check, the first /health), so all of it is in the
// cache compiled. Its log lines go to this process's stdout (the Makefile discards them).
process.argv = [process.execPath, bundle, "--listen", `127.0.0.1:${port}`, "--log-level", "warn"];
const main = { exports: {} };
// Run as a file beside dist/error-pages/, where the bundle finds its template outside a binary.
script.runInThisContext()(main.exports, createRequire(bundle), main, bundle, dirname(bundle));
while (!(await healthOk(port))) await new Promise((done) => setTimeout(done, 5));
writeFileSync(output, script.createCachedData());
process.exit(0);
