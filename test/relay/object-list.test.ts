// objectList: an empty array V8 already holds as an array of objects (checked by the runtime's own %HasObjectElements in a child), usable as any array.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import t from "tap";
import { objectList } from "../../src/relay/object-list.js";

const SOURCE = join(import.meta.dirname, "../../src/relay/object-list.ts");

t.test("empty, with the elements kind of an array of objects, where `[]` has small integers' (the runtime strips the types itself)", async (t) => {
  const script = `import { objectList } from ${JSON.stringify(SOURCE)}; const list = objectList(); console.log(JSON.stringify([list.length, %HasObjectElements(list), %HasObjectElements([])]));`;
  const printed = execFileSync(process.execPath, ["--allow-natives-syntax", "--disable-warning=ExperimentalWarning", "--input-type=module", "-e", script], { encoding: "utf8" });
  t.same(JSON.parse(printed), [0, true, false]);
});

t.test("a list of its own each call, holding what is pushed", async (t) => {
  const first = objectList<{ id: number }>();
  const second = objectList<{ id: number }>();
  first.push({ id: 1 }, { id: 2 });
  t.same(first, [{ id: 1 }, { id: 2 }]);
  t.same(second, []);
  t.same(first.pop(), { id: 2 });
  t.equal(first.length, 1);
});
