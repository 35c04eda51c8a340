// The access log's pipe sink over a real FIFO: chunks arrive whole and in order, a stopped reader bounds the queue (the rest dropped, counted, reported once caught up), end() gives up on it, a broken pipe drops without throwing.
import t, { type Test } from "tap";
import { PipeSink } from "../../src/access-log/pipe-sink.js";
import { reopenPipeNonBlocking } from "../../src/access-log/stdout-sink.js";
import { lineReader, makeFifo } from "../helpers/fifo.js";
import { deferred } from "../helpers/test-doubles.js";

/** Linux's default pipe capacity (16 pages): what the kernel takes before a non-blocking write sees EAGAIN. */
const PIPE_CAPACITY = 64 * 1024;

/** Chunk `index` of `lines` lines of `lineBytes` bytes each, newline included; every line names its chunk and place. */
function chunk(index: number, lines = 4, lineBytes = 256): Buffer {
  const text = Array.from({ length: lines }, (_, line) => `${index}:${line}:`.padEnd(lineBytes - 1, "x") + "\n").join("");
  return Buffer.from(text);
}

/** A sink on its own non-blocking descriptor of a fresh FIFO, as src/access-log/stdout-sink.ts opens it for stdout. */
function sinkOnFifo(t: Test, options: ConstructorParameters<typeof PipeSink>[1] = {}) {
  const fifo = makeFifo(t);
  const fd = reopenPipeNonBlocking(fifo.writeFd, "/proc/self/fd");
  if (fd === undefined) throw new Error("a FIFO could not be reopened non-blocking");
  const sink = new PipeSink(fd, options);
  return { fifo, sink };
}

t.test("chunks arrive whole and in order while the pipe fills and drains, a chunk over PIPE_BUF included", async (t) => {
  const { fifo, sink } = sinkOnFifo(t, { maxQueuedBytes: 64 * 1024 * 1024 });
  const reader = lineReader(fifo.read(fifo.readFd));
  const written: Buffer[] = [];
  let taken = 0;
  for (let index = 0; index < 2_000; index++) {
    // Every 97th chunk one line of 10 KiB: the pipe may take it in parts, and the rest must still follow in order.
    const next = index % 97 === 0 ? chunk(index, 1, 10 * 1024) : chunk(index, 1 + (index % 7), 64 + (index % 300));
    if (sink.write(next)) taken++;
    written.push(next);
  }
  t.equal(taken, 2_000, "every chunk taken: the bound is far");
  await sink.end(5_000);
  fifo.closeWriteEnd();
  await reader.ended;
  t.equal(reader.rest(), "", "no torn line at the end");
  t.equal(reader.lines.join("\n") + "\n", Buffer.concat(written).toString("utf8"), "every byte, in the order written");
});

t.test("a stopped reader: the queue stops at maxQueuedBytes, later chunks are dropped and counted, reported once it has caught up, and lines resume", async (t) => {
  const reports: number[] = [];
  const reported = deferred<number>();
  const maxQueuedBytes = 32 * 1024;
  const { fifo, sink } = sinkOnFifo(t, {
    maxQueuedBytes,
    onDropped: (lines) => {
      reports.push(lines);
      reported.resolve(lines);
    },
  });
  // Nobody reads yet. One chunk a turn, as batches come: the pipe fills, then the queue, then chunks are dropped.
  const accepted: number[] = [];
  let index = 0;
  for (; index < 1_000; index++) {
    if (!sink.write(chunk(index))) break;
    accepted.push(index);
    await new Promise((resolve) => setImmediate(resolve));
  }
  t.ok(index < 1_000, `the first chunk dropped was number ${index}`);
  t.ok(accepted.length * 1024 <= PIPE_CAPACITY + maxQueuedBytes + 1024, `${accepted.length} KiB taken: the pipe's 64 KiB and the queue's 32 at most`);
  t.ok(accepted.length * 1024 >= maxQueuedBytes, "the queue held what the pipe could not");
  let dropped = 1;
  for (index++; index < accepted.length + 50; index++) if (!sink.write(chunk(index))) dropped++;
  t.equal(dropped, index - accepted.length, "the next ones dropped too: the pipe is still full");
  t.same(reports, [], "no report while stdout is full: it would wait on it");
  const total = index;
  const reader = lineReader(fifo.read(fifo.readFd));
  t.equal(await reported.promise, (total - accepted.length) * 4, "every dropped line counted, in one report once the queue drained");
  await reader.untilLine((line) => line.startsWith(`${accepted.at(-1)}:3:`));
  t.same(
    reader.lines.map((line) => Number(line.split(":")[0])),
    accepted.flatMap((index) => [index, index, index, index]),
    "what was kept came whole, in order",
  );
  t.equal(sink.write(chunk(1_000)), true, "taken again once the queue has room");
  await reader.untilLine((line) => line.startsWith("1000:3:"));
  await sink.end(1_000);
  t.equal(reports.length, 1, "one report for the episode");
});

t.test("lifecycle lines (writeUrgent) on a full pipe: queued ahead of every access chunk, bounded on their own, the drops reported once it reads again", async (t) => {
  const urgentReported = deferred<number>();
  const { fifo, sink } = sinkOnFifo(t, { maxQueuedBytes: 64 * 1024, maxUrgentBytes: 8 * 1024, onUrgentDropped: (lines) => urgentReported.resolve(lines) });
  // Nobody reads: access chunks fill the pipe, then wait in the queue.
  const accessChunks: number[] = [];
  for (let index = 0; index < 100; index++) {
    if (sink.write(chunk(index))) accessChunks.push(index);
    await new Promise((resolve) => setImmediate(resolve));
  }
  t.ok(accessChunks.length > 64, "the pipe is full and access chunks wait");
  // 32 lifecycle lines of 1 KiB: 8 fit the bound, the rest are dropped.
  let kept = 0;
  for (let index = 0; index < 32; index++) if (sink.writeUrgent(chunk(5_000 + index, 1, 1024))) kept++;
  t.equal(kept, 8, "8 KiB of lifecycle lines wait, no more");
  const reader = lineReader(fifo.read(fifo.readFd));
  t.equal(await urgentReported.promise, 24, "the dropped lifecycle lines are reported once the queue drained");
  await reader.untilLine((line) => line.startsWith(`${accessChunks.at(-1)}:3:`));
  const order = reader.lines.map((line) => Number(line.split(":")[0]));
  const firstUrgent = order.indexOf(5_000);
  const lastAccessBefore = order.findIndex((index) => index === accessChunks.at(-1));
  t.ok(firstUrgent >= 0 && firstUrgent < lastAccessBefore, "lifecycle lines went before the access chunks that waited");
  t.same(order.filter((index) => index >= 5_000), [5_000, 5_001, 5_002, 5_003, 5_004, 5_005, 5_006, 5_007], "the kept ones, whole and in order");
  await sink.end(1_000);
});

t.test("end() with a reader that never reads resolves after timeoutMs without progress; what comes after is dropped, nothing thrown", async (t) => {
  const { sink } = sinkOnFifo(t);
  for (let index = 0; index < 200; index++) sink.write(chunk(index));
  const started = performance.now();
  await sink.end(50);
  t.ok(performance.now() - started >= 45, "it waited for the timeout");
  t.equal(sink.write(chunk(1)), false, "dropped after end()");
  t.equal(await sink.end(50), undefined, "a second end() resolves too");
});

t.test("end() with nothing queued resolves at once", async (t) => {
  const { fifo, sink } = sinkOnFifo(t);
  const reader = lineReader(fifo.read(fifo.readFd));
  sink.write(chunk(0));
  await reader.untilLine((line) => line.startsWith("0:3:"));
  await sink.end(60_000);
  t.pass("no wait for the timeout");
});

t.test("a broken pipe (the reader went away): the write's EPIPE is contained, later chunks are dropped, end() resolves", async (t) => {
  const { fifo, sink } = sinkOnFifo(t);
  fifo.read(fifo.readFd).destroy();
  t.equal(sink.write(chunk(0)), true, "taken: the pipe's error comes after");
  // The failed write's error is emitted from process.nextTick: it has happened before the next turn.
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(sink.write(chunk(1)), false, "dropped: nobody can read it");
  await sink.end(60_000);
});

t.test("one chunk longer than the bound is still taken when nothing waits", async (t) => {
  const { fifo, sink } = sinkOnFifo(t, { maxQueuedBytes: 1024 });
  const reader = lineReader(fifo.read(fifo.readFd));
  t.equal(sink.write(chunk(0, 1, 8 * 1024)), true);
  await reader.untilLine((line) => line.startsWith("0:0:"));
  t.equal(reader.lines[0]!.length, 8 * 1024 - 1);
  await sink.end(1_000);
});
