// Every `$ readiness-proxy ...` example of README.md followed by an `error:` line is what the program prints for it, byte for byte.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import t from "tap";
import { parseCommandLine } from "../../src/cli.js";

const readme = readFileSync(join(import.meta.dirname, "../../README.md"), "utf8");

/** `[VAR=value ...] readiness-proxy args...` (no quoting in the README's examples) and the error line after it. */
const examples = [...readme.matchAll(/^\$ ((?:[A-Z_]+=\S* )*)readiness-proxy(.*)\n(error: .*)$/gm)].map((match) => ({
  command: match[0].split("\n")[0]!.slice(2),
  env: Object.fromEntries(match[1]!.trim().split(/\s+/).filter(Boolean).map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)])),
  argv: match[2]!.trim().split(/\s+/).filter(Boolean),
  error: match[3]!,
}));

t.test("the README's error examples", async (t) => {
  t.ok(examples.length >= 7, `${examples.length} examples`);
  for (const { command, env, argv, error } of examples) {
    let err = "";
    const result = parseCommandLine(argv, env, { writeOut: () => {}, writeErr: (text) => (err += text) });
    t.same(result, { action: "exit", exitCode: 2 }, command);
    t.equal(err, `${error}\n`, command);
  }
});
