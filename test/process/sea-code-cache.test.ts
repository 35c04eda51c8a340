// The single binary's entry (src/sea/sea-loader.cts): the bundle asset is the bundle, wrapped and ASCII, and each architecture's runtime accepts that architecture's code cache for it under the binary's flags.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import t from "tap";
import { runToExit } from "../helpers/spawn-daemon.js";

const root = join(import.meta.dirname, "../..");
const SEA_BUNDLE = join(root, "dist/sea-bundle.js");
const EMBEDDED_NODE = join(root, `node_modules/node-linux-${process.arch}/bin/node`);
const built = existsSync(SEA_BUNDLE);

t.test("the bundle asset is the bundle as one function of the CommonJS arguments, in ASCII", { skip: !built && "not built: run make build" }, async (t) => {
  const asset = readFileSync(SEA_BUNDLE);
  t.equal(asset.findIndex((byte) => byte > 0x7f), -1, "ASCII: the loader decodes it as latin1");
  const bundle = readFileSync(join(root, "dist/readiness-proxy.cjs"));
  const head = "(function (exports, require, module, __filename, __dirname) {";
  t.equal(asset.toString("latin1"), `${head}${bundle.toString("latin1")}\n})`);
});

/** Each architecture's runtime, as the Makefile runs it: this host's from npm, the other's fetched into dist/runtimes and run under qemu-user. */
const RUNTIMES = [
  { arch: process.arch, command: [EMBEDDED_NODE] },
  process.arch === "x64"
    ? { arch: "arm64", command: ["qemu-aarch64-static", "-L", "/usr/aarch64-linux-gnu", join(root, "dist/runtimes/node-linux-arm64")] }
    : { arch: "x64", command: ["qemu-x86_64-static", "-L", "/usr/x86_64-linux-gnu", join(root, "dist/runtimes/node-linux-x64")] },
];

for (const { arch, command } of RUNTIMES) {
  const cache = join(root, `dist/sea-code-cache-linux-${arch}.bin`);
  const runtime = command.at(-1)!;
  const skip = (!existsSync(SEA_BUNDLE) && "not built: run make build") || (!existsSync(cache) && `no ${arch} code cache: run make release`) || (!existsSync(runtime) && `no ${arch} runtime: run make release`);
  t.test(`the linux-${arch} runtime, under the binary's execArgv, accepts that architecture's code cache for the bundle asset`, { skip }, async (t) => {
    // A cache V8 rejects costs nothing but speed, so nothing else would notice it.
    const { execArgv } = JSON.parse(readFileSync(join(root, "sea-config.json"), "utf8")) as { execArgv: string[] };
    const script = [
      'const { readFileSync } = require("node:fs");',
      'const { Script } = require("node:vm");',
      `const script = new Script(readFileSync(${JSON.stringify(SEA_BUNDLE)}, "latin1"), { filename: "readiness-proxy", cachedData: readFileSync(${JSON.stringify(cache)}) });`,
      "console.log(JSON.stringify({ rejected: script.cachedDataRejected }));",
    ].join("\n");
    const run = await runToExit([...command, ...execArgv, "-e", script]);
    t.equal(run.code, 0, run.stderr);
    t.same(JSON.parse(run.stdout), { rejected: false });
  });
}
