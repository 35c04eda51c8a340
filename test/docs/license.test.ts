// The LICENSE file is the license package.json declares: the Apache License 2.0, whole.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import t from "tap";

const root = join(import.meta.dirname, "../..");

t.test("LICENSE is the full Apache License 2.0 text that package.json names", async (t) => {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { license: string };
  t.equal(pkg.license, "Apache-2.0");
  const text = readFileSync(join(root, "LICENSE"), "utf8");
  t.match(text, /^\s*Apache License\s+Version 2\.0, January 2004\s+http:\/\/www\.apache\.org\/licenses\/\s/);
  // Every one of the nine sections, and the end of the terms: not a summary or a pointer.
  for (let section = 1; section <= 9; section++) t.match(text, new RegExp(`^\\s+${section}\\. [A-Z]`, "m"), `section ${section}`);
  t.match(text, /END OF TERMS AND CONDITIONS/);
});
