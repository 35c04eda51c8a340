// The single binary's entry: compiles the bundle (an asset of the binary) with a code cache made after a warm start, then runs it as the main module.
import sea = require("node:sea");
import vm = require("node:vm");

/** The bundle wrapped as `(function (exports, require, module, __filename, __dirname) {...})` (Makefile). */
const BUNDLE_ASSET = "readiness-proxy.js";
/** V8's code cache of that script, made by src/sea/make-code-cache.mjs with this binary's runtime and flags. */
const CODE_CACHE_ASSET = "readiness-proxy.cache";

/**
 * Why the bundle is not the SEA's main script itself: Node makes a main script's code cache
 * right after compiling it, before anything has run, so it holds the top-level code only, and
 * every function a start calls (commander's parsing, pino, the daemon's wiring, the first
 * request) was compiled from source at each start. This cache is made after a real start to the
 * first /health, so it holds those functions compiled: the first /health 5-8% sooner, RssAnon
 * the same (see the Makefile). V8 checks that a cache fits the source, its version and its
 * flags, and ignores one that does not: the start is then slower, never different.
 *
 * The asset is ASCII (the Makefile checks), so latin1 decodes it exactly and makes one copy,
 * the string itself, as Node does for a main script; the raw assets are not copied.
 */
const source = Buffer.from(sea.getRawAsset(BUNDLE_ASSET)).toString("latin1");
const script = new vm.Script(source, { filename: __filename, cachedData: new Uint8Array(sea.getRawAsset(CODE_CACHE_ASSET)) });
// The bundle gets this module's CommonJS arguments, as it did as the main script.
const runBundle = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: NodeJS.Module, filename: string, dirname: string) => void;
runBundle(exports, require, module, __filename, __dirname);
