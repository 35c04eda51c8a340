// The access lines' batch: out at the end of the turn when idle, at most once per interval under load, in whole-line chunks of at most PIPE_BUF bytes, everything out on close.
import t from "tap";
import fc from "fast-check";
import { AccessLineWriter } from "../../src/access-log/access-line.js";
import type { AccessLogEntry } from "../../src/access-log/access-log-entry.js";
import { LineBatch } from "../../src/access-log/line-batch.js";

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A batch over a sink that keeps every chunk, with a clock the test moves. */
function batch(options: { maxChunkBytes?: number; intervalMs?: number } = {}) {
  const chunks: string[] = [];
  const clock = { ms: 1_000 };
  const lines = new LineBatch({ write: (chunk: Buffer) => chunks.push(chunk.toString("utf8")) }, { maxChunkBytes: options.maxChunkBytes ?? 4096, intervalMs: options.intervalMs ?? 25, now: () => clock.ms });
  return { lines, chunks, clock };
}

t.test("idle: a line goes out at the end of its turn, with the others of that turn, in one chunk", async (t) => {
  const { lines, chunks } = batch();
  lines.write("a\n");
  lines.write("b\n");
  t.same(chunks, [], "nothing during the turn");
  await nextTurn();
  t.same(chunks, ["a\nb\n"]);
});

t.test("under load: the next batch waits for the interval, then goes out whole", async (t) => {
  // A real interval, short: the wait is a timer; the injected clock says how long it must be.
  const { lines, chunks, clock } = batch({ intervalMs: 5 });
  lines.write("1\n");
  await nextTurn();
  t.same(chunks, ["1\n"]);
  clock.ms += 1;
  lines.write("2\n");
  await nextTurn();
  t.same(chunks, ["1\n"], "held: the last write was 1 ms ago");
  lines.write("3\n");
  await new Promise((resolve) => setTimeout(resolve, 10));
  t.same(chunks, ["1\n", "2\n3\n"], "out after the interval, together");
  clock.ms += 100;
  lines.write("4\n");
  await nextTurn();
  t.same(chunks.at(-1), "4\n", "quiet long enough: at the end of the turn again");
});

t.test("chunks are whole lines of at most maxChunkBytes bytes, counted in UTF-8; a longer line is a chunk alone", async (t) => {
  const { lines, chunks } = batch({ maxChunkBytes: 10 });
  lines.write("aaaa\n");
  lines.write("ééé\n"); // 7 bytes in UTF-8, 4 UTF-16 units: does not fit after the first 5
  lines.write("b\n");
  lines.write("0123456789abcdef\n");
  lines.write("c\n");
  lines.close();
  t.same(chunks, ["aaaa\n", "ééé\nb\n", "0123456789abcdef\n", "c\n"]);
  for (const chunk of chunks.slice(0, 2)) t.ok(Buffer.byteLength(chunk) <= 10);
});

t.test("close: what is queued goes out at once, later lines are dropped, and no timer fires after", async (t) => {
  const { lines, chunks, clock } = batch({ intervalMs: 5 });
  lines.write("1\n");
  await nextTurn();
  clock.ms += 1;
  lines.write("2\n");
  lines.close();
  t.same(chunks, ["1\n", "2\n"], "the held line too");
  t.equal(lines.write("3\n"), false);
  await new Promise((resolve) => setTimeout(resolve, 10));
  t.same(chunks, ["1\n", "2\n"]);
});

t.test("lines an encoder writes in place: in order, whole, in chunks of at most maxChunkBytes (a longer line alone), across many buffers", async (t) => {
  const writer = new AccessLineWriter({ level: 30, time: () => `,"time":1`, bindings: "", messageKey: "msg" });
  const userAgent = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: "binary", maxLength: 40 }), fc.string({ minLength: 3000, maxLength: 6000 }));
  const entry: fc.Arbitrary<AccessLogEntry> = fc.record({
    method: fc.constantFrom("GET", "POST"),
    path: fc.string({ maxLength: 60 }),
    protocol: fc.constant("HTTP/1.1"),
    status: fc.integer({ min: 100, max: 599 }),
    bytesSent: fc.nat(),
    durationMs: fc.double({ min: 0, max: 1e5, noNaN: true }),
    requestId: fc.uuid(),
    remoteAddr: fc.constant("127.0.0.1"),
    userAgent,
  });
  fc.assert(
    fc.property(fc.array(entry, { minLength: 1, maxLength: 400 }), fc.integer({ min: 600, max: 4096 }), (entries, maxChunkBytes) => {
      const chunks: Buffer[] = [];
      const lines = new LineBatch({ write: (chunk: Buffer) => chunks.push(Buffer.from(chunk)) }, { maxChunkBytes, intervalMs: 25, now: () => 0 });
      for (const given of entries) lines.writeEncoded(writer, given);
      lines.close();
      const want = entries.map((given) => writer.line(given));
      const whole = chunks.every((chunk) => chunk.at(-1) === 0x0a && (chunk.length <= maxChunkBytes || chunk.indexOf(0x0a) === chunk.length - 1));
      return whole && Buffer.concat(chunks).toString("utf8") === want.join("");
    }),
    { numRuns: 60 },
  );
  t.pass("60 random runs of up to 400 lines");
});
