// The access log's chunks through pino's sonic-boom destination (writes on libuv's thread pool): for a stdout that is not a pipe the process can reopen (a file, a TTY, a socket), bounded like the pipe.
import type { pino } from "pino";
import { DroppedLines, type AccessSink, type AccessSinkOptions } from "./access-sink.js";

/** pino's own destination (sonic-boom). */
export type LogDestination = ReturnType<typeof pino.destination>;

/**
 * `destination` should be in buffer mode with `maxLength` set (stdout-sink.ts's
 * stdoutDestination): sonic-boom then drops a chunk that would take its queue past it and emits
 * `drop`, counted here, and `drain` when its queue is empty, when the count is reported.
 *
 * Why end() instead of flushSync() before exit, as pino's own exit hook does: when an
 * asynchronous write is still on the thread pool, flushSync writes the lines after it first
 * (measured: a block of lines out of order in 2 or 3 exits of 10 right after a burst), and a
 * partial write's rest is never written. end() waits for the write in flight, then writes the
 * rest in order, then closes.
 */
export function sonicBoomSink(destination: LogDestination, { onDropped }: AccessSinkOptions = {}): AccessSink {
  const dropped = new DroppedLines(onDropped);
  destination.on("drop", (chunk: Buffer) => dropped.add(chunk));
  destination.on("drain", () => dropped.caughtUp());
  let ended: Promise<void> | undefined;
  return {
    // sonic-boom's types know only its utf8 mode; in buffer mode it takes Buffers.
    write: (chunk: Buffer) => destination.write(chunk as unknown as string),
    end: (timeoutMs: number) =>
      (ended ??= new Promise<void>((resolve) => {
        const giveUp = () => {
          // destroy() marks it closed at once, so pino's exit hook does not flushSync (and spin on EAGAIN) after us.
          destination.destroy();
          resolve();
        };
        let timer = setTimeout(giveUp, timeoutMs);
        // A slow reader that still takes lines is waited for: only `timeoutMs` without progress gives up.
        const progressed = () => {
          clearTimeout(timer);
          timer = setTimeout(giveUp, timeoutMs);
        };
        const done = () => {
          clearTimeout(timer);
          destination.off("write", progressed);
          resolve();
        };
        destination.on("write", progressed);
        destination.once("close", done);
        destination.once("error", done);
        destination.end();
      })),
  };
}
