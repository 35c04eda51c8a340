// What both access sinks share: dropped lines counted by their newlines and reported once caught up; the sonic-boom fallback bounded by maxLength the same way, its kept lines whole and in order.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import t from "tap";
import { DroppedLines } from "../../src/access-log/access-sink.js";
import { sonicBoomSink } from "../../src/access-log/sonic-boom-sink.js";
import { deferred } from "../helpers/test-doubles.js";

t.test("DroppedLines: counts whole lines, reports nothing until caught up, then the total once", async (t) => {
  const reports: number[] = [];
  const dropped = new DroppedLines((lines) => reports.push(lines));
  dropped.caughtUp();
  t.same(reports, [], "nothing dropped, nothing said");
  dropped.add(Buffer.from("a\nb\nc\n"));
  dropped.add(Buffer.from("d\n"));
  t.same(reports, []);
  dropped.caughtUp();
  dropped.caughtUp();
  t.same(reports, [4], "one report per episode");
  dropped.add(Buffer.from("e\n"));
  dropped.caughtUp();
  t.same(reports, [4, 1]);
});

t.test("the sonic-boom fallback: past maxLength chunks are dropped and counted, reported at its drain; what it kept is written whole and in order", async (t) => {
  const file = join(t.testdir(), "stdout.log");
  const reported = deferred<number>();
  // Every chunk is handed over in one turn: sonic-boom's first write is on the thread pool meanwhile, so the rest waits in its queue.
  const sink = sonicBoomSink(pino.destination({ dest: file, sync: false, maxWrite: 4096, maxLength: 16 * 1024, contentMode: "buffer" }), { onDropped: reported.resolve });
  for (let index = 0; index < 100; index++) sink.write(Buffer.from(`${index}:a:`.padEnd(511, "x") + "\n" + `${index}:b:`.padEnd(511, "y") + "\n"));
  const dropped = await reported.promise;
  await sink.end(1_000);
  const lines = readFileSync(file, "utf8").split("\n").filter((line) => line !== "");
  t.ok(lines.length < 200, `${lines.length} of 200 lines written`);
  t.equal(dropped, 200 - lines.length, "every line not written was counted");
  t.same(
    lines.map((line) => line.split(":")[0]),
    lines.map((_, index) => String(Math.floor(index / 2))),
    "the first chunks kept, whole, in order",
  );
});
