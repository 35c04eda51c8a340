// The single binary's entry (src/sea-loader.cts): the bundle asset is the bundle, wrapped and ASCII, and its code cache is one the embedded runtime accepts under the binary's flags.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import t from "tap";
import { runToExit } from "../helpers/spawn-daemon.js";

const root = join(import.meta.dirname, "../..");
const SEA_BUNDLE = join(root, "dist/sea-bundle.js");
const CODE_CACHE = join(root, `dist/sea-code-cache-linux-${process.arch}.bin`);
const EMBEDDED_NODE = join(root, `node_modules/node-linux-${process.arch}/bin/node`);
const built = existsSync(SEA_BUNDLE) && existsSync(CODE_CACHE) && existsSync(EMBEDDED_NODE);

t.test("the bundle asset is the bundle as one function of the CommonJS arguments, in ASCII", { skip: !built && "not built: run make build" }, async (t) => {
  const asset = readFileSync(SEA_BUNDLE);
  t.equal(asset.findIndex((byte) => byte > 0x7f), -1, "ASCII: the loader decodes it as latin1");
  const bundle = readFileSync(join(root, "dist/readiness-proxy.cjs"));
  const head = "(function (exports, require, module, __filename, __dirname) {";
  t.equal(asset.toString("latin1"), `${head}${bundle.toString("latin1")}\n})`);
});

t.test("the embedded runtime, under the binary's execArgv, accepts the code cache for the bundle asset", { skip: !built && "not built: run make build" }, async (t) => {
  // A cache V8 rejects costs nothing but speed, so nothing else would notice it.
  const { execArgv } = JSON.parse(readFileSync(join(root, "sea-config.json"), "utf8")) as { execArgv: string[] };
  const script = [
    'const { readFileSync } = require("node:fs");',
    'const { Script } = require("node:vm");',
    `const script = new Script(readFileSync(${JSON.stringify(SEA_BUNDLE)}, "latin1"), { filename: "readiness-proxy", cachedData: readFileSync(${JSON.stringify(CODE_CACHE)}) });`,
    "console.log(JSON.stringify({ rejected: script.cachedDataRejected }));",
  ].join("\n");
  const run = await runToExit([EMBEDDED_NODE, ...execArgv, "-e", script]);
  t.equal(run.code, 0, run.stderr);
  t.same(JSON.parse(run.stdout), { rejected: false });
});
