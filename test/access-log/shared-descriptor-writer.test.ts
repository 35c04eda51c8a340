// The entrypoint form's writer for a stdout the app shares, over a real FIFO: a chunk written whole through a full pipe (EAGAIN retried, a partial write finished), `writing` while a write is out; and PipeSink.lifecycleWritten on top of it.
import { closeSync } from "node:fs";
import t from "tap";
import { PipeSink, type ChunkWriter } from "../../src/access-log/pipe-sink.js";
import { SharedDescriptorWriter } from "../../src/access-log/shared-descriptor-writer.js";
import { reopenPipeNonBlocking } from "../../src/access-log/stdout-sink.js";
import { lineReader, makeFifo } from "../helpers/fifo.js";
import { deferred } from "../helpers/test-doubles.js";

t.test("a description made non-blocking by someone else and full: EAGAIN is retried, the partial write finished, the chunk arrives whole after what filled the pipe", async (t) => {
  const fifo = makeFifo(t);
  const fd = reopenPipeNonBlocking(fifo.writeFd, "/proc/self/fd");
  if (fd === undefined) throw new Error("a FIFO could not be reopened non-blocking");
  const writer = new SharedDescriptorWriter(fd);
  // 64 KiB of filler first: the pipe is then full and the chunk behind it waits on EAGAIN.
  const filler = Buffer.from(`${"f".repeat(1023)}\n`.repeat(64));
  const fillerDone = deferred<Error | null | undefined>();
  writer.write(filler, (error) => fillerDone.resolve(error));
  t.equal(await fillerDone.promise, undefined, "the filler written");
  // 200 KiB, more than the pipe holds: taken in parts, each rest written after.
  const big = Buffer.from(Array.from({ length: 200 }, (_, index) => `${index}:`.padEnd(1023, "x") + "\n").join(""));
  const bigDone = deferred<Error | null | undefined>();
  writer.write(big, (error) => bigDone.resolve(error));
  const reader = lineReader(fifo.read(fifo.readFd));
  t.equal(await bigDone.promise, undefined, "the chunk written once the pipe was read");
  t.notOk(writer.writing, "no write out once done");
  writer.close();
  fifo.closeWriteEnd();
  closeSync(fd);
  await reader.ended;
  t.equal(reader.lines.length, 264, "every line");
  t.same(reader.lines.slice(64).map((line) => line.split(":")[0]), Array.from({ length: 200 }, (_, index) => String(index)), "whole and in order after the filler");
  t.equal(reader.rest(), "");
});

/** A writer whose writes complete only when the test says: the lifecycle lane's wait, without a real stdout. */
function heldWriter() {
  const pending: Array<() => void> = [];
  const writer: ChunkWriter = { write: (_chunk, done) => void pending.push(() => done()), close: () => {} };
  return { writer, completeOne: () => pending.shift()?.() };
}

t.test("lifecycleWritten: resolves once the lifecycle lines taken so far are written, ahead of access chunks, or at its bound", async (t) => {
  const { writer, completeOne } = heldWriter();
  const sink = new PipeSink(writer);
  sink.write(Buffer.from("access\n"));
  sink.writeUrgent(Buffer.from("stopping app\n"));
  let written = false;
  const waiting = sink.lifecycleWritten(60_000).then(() => (written = true));
  completeOne(); // the access chunk that was in flight
  await Promise.resolve();
  t.notOk(written, "not before the lifecycle line itself");
  completeOne();
  await waiting;
  t.ok(written, "once it is written");
  t.equal(await sink.lifecycleWritten(60_000), undefined, "at once when nothing waits");
  sink.writeUrgent(Buffer.from("never written\n"));
  t.equal(await sink.lifecycleWritten(1), undefined, "a stdout that takes nothing costs the bound, no more");
  void sink.end(1);
});
