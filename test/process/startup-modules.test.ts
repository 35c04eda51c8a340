// What loading and starting the bundle cost: Node modules not needed before the first /health (http, http2, tls, crypto, v8, ...) stay unloaded, and the llhttp binding waits for the first connection.
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
  // The llhttp binding (src/relay/http1/llhttp-binding.ts) is loaded at the first parser: it cannot go
  // into the SEA's startup snapshot (the builder refuses its handles), and --version needs none.
  t.notOk(loaded.has("NativeModule _http_common"), "node:_http_common not loaded");
  t.notOk(loaded.has("Internal Binding http_parser"), "the http_parser binding not loaded");
  t.ok(loaded.has("NativeModule net"), "the check sees real loads (node:net is one)");
});

t.test("node:http2 is loaded neither by HTTP/1.1 nor by an HTTP/2 client: HTTP/2 is the codec of our own", { skip: !bundle.built && "the bundle is not built: run make build" }, async (t) => {
  const { spawnDaemon } = await import("../helpers/spawn-daemon.js");
  const { h2Connect, h2Request } = await import("../helpers/h2.js");
  const { send } = await import("../helpers/http-client.js");
  for (const speaksH2 of [false, true]) {
    const work = mkdtempSync(join(tmpdir(), "rp-modules-"));
    const preload = join(work, "record-modules.cjs");
    const out = join(work, "modules.txt");
    writeFileSync(preload, `process.on("exit", () => require("fs").writeFileSync(${JSON.stringify(out)}, process.moduleLoadList.join("\\n")));\n`);
    const daemon = await spawnDaemon(t, [process.execPath, "-r", preload, ...bundle.command.slice(1)], []);
    t.equal((await send(daemon.port, "/healthz")).status, 200, "HTTP/1.1 served");
    if (speaksH2) {
      const answer = await h2Request(h2Connect(t, daemon.port), { ":path": "/healthz" });
      t.equal(answer.status, 200, "h2 served by the bundle");
      t.equal(answer.body.toString(), '{"status":"ok"}');
    }
    daemon.child.kill("SIGTERM");
    t.equal(await daemon.exited, 0);
    const loaded = new Set(readFileSync(out, "utf8").split("\n"));
    t.notOk(loaded.has("NativeModule http2"), speaksH2 ? "node:http2 not loaded by an h2 client" : "node:http2 not loaded by HTTP/1.1 traffic");
  }
});

// Built-in modules a start does not need before its first /health, each with what loads it when it is needed.
const NOT_LOADED_BY_A_START = [
  { module: "v8", why: "asked only by a snapshot build (src/snapshot-build.ts) and the first stream garbage collection" },
  { module: "fs/promises", why: "the socket tables are read with node:fs's callbacks (src/procfs/listener-scan.ts)" },
  { module: "assert", why: "sonic-boom's assert() loads it only to fail (src/shims/assert-on-failure.cts)" },
  { module: "module", why: "pino's transport support is shimmed out of the bundle (src/shims/module-unused.ts)" },
  { module: "inspector", why: "asked only when process.debugPort says an inspector may be open (src/inspector-guard.ts)" },
  { module: "worker_threads", why: "pino's isMainThread comes from src/shims/worker-threads-main.ts" },
];

t.test("a start, its first /health and its shutdown leave the modules it does not need unloaded", { skip: !bundle.built && "the bundle is not built: run make build" }, async (t) => {
  const { spawnDaemon } = await import("../helpers/spawn-daemon.js");
  const { send } = await import("../helpers/http-client.js");
  const work = mkdtempSync(join(tmpdir(), "rp-modules-"));
  const preload = join(work, "record-modules.cjs");
  const out = join(work, "modules.txt");
  writeFileSync(preload, `process.on("exit", () => require("fs").writeFileSync(${JSON.stringify(out)}, process.moduleLoadList.join("\\n")));\n`);
  // Under the binary's runtime flags (sea-config.json), without NODE_OPTIONS: tap's coverage hooks put an --import there that loads node:module and more.
  const { execArgv } = JSON.parse(readFileSync(join(import.meta.dirname, "../../sea-config.json"), "utf8")) as { execArgv: string[] };
  const daemon = await spawnDaemon(t, ["env", "-u", "NODE_OPTIONS", process.execPath, ...execArgv, "-r", preload, ...bundle.command.slice(1)], []);
  t.equal((await send(daemon.port, "/health")).status, 200);
  daemon.child.kill("SIGTERM");
  t.equal(await daemon.exited, 0);
  const loaded = new Set(readFileSync(out, "utf8").split("\n"));
  for (const { module, why } of NOT_LOADED_BY_A_START) t.notOk(loaded.has(`NativeModule ${module}`), `node:${module} not loaded: ${why}`);
  t.ok(loaded.has("NativeModule net"), "the check sees real loads (node:net is one)");
});
