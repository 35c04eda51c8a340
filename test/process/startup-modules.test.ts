// What loading the bundle costs: Node modules we never use at start (http, http2, tls, crypto) stay unloaded, and the llhttp binding waits for the first connection.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t from "tap";
import { BUILT_ARTIFACTS, runToExit } from "../helpers/spawn-daemon.js";

const bundle = BUILT_ARTIFACTS.find((artifact) => artifact.name === "bundle")!;

t.test("loading the bundle leaves http, http2, tls, crypto and the llhttp binding unloaded", { skip: !bundle.built && "the bundle is not built: run make build" }, async (t) => {
  // A preload that writes, at exit, the built-in modules this process loaded.
  const work = mkdtempSync(join(tmpdir(), "rp-modules-"));
  const preload = join(work, "record-modules.cjs");
  const out = join(work, "modules.txt");
  writeFileSync(preload, `process.on("exit", () => require("fs").writeFileSync(${JSON.stringify(out)}, process.moduleLoadList.join("\\n")));\n`);
  const run = await runToExit(["env", "-u", "NODE_OPTIONS", process.execPath, "-r", preload, ...bundle.command.slice(1), "--version"]);
  t.equal(run.code, 0, run.stderr);
  const loaded = new Set(readFileSync(out, "utf8").split("\n"));
  // Each is ~10-17 ms of start-up: http (the relay parses with llhttp's binding; undici, which
  // loads it, waits for the first upstream health probe), http2 (undici's unused HTTP/2 client,
  // shimmed out at bundle time), tls (only with it), crypto (request ids use the global Web
  // Crypto, loaded at first use).
  for (const module of ["http", "http2", "tls", "crypto"]) t.notOk(loaded.has(`NativeModule ${module}`), `node:${module} not loaded`);
  // The llhttp binding (src/relay/llhttp-binding.ts) is loaded at the first parser: it cannot go
  // into the SEA's startup snapshot (the builder refuses its handles), and --version needs none.
  t.notOk(loaded.has("NativeModule _http_common"), "node:_http_common not loaded");
  t.notOk(loaded.has("Internal Binding http_parser"), "the http_parser binding not loaded");
  t.ok(loaded.has("NativeModule net"), "the check sees real loads (node:net is one)");
});
