// Where the access log's chunks go: a non-blocking descriptor of stdout's pipe of the process's own when stdout is a pipe (what container runtimes give a container), else sonic-boom on fd 1.
import { closeSync, constants, fstatSync, openSync } from "node:fs";
import { pino } from "pino";
import { MAX_QUEUED_BYTES, type AccessSink, type AccessSinkOptions } from "./access-sink.js";
import { PipeSink } from "./pipe-sink.js";
import { sonicBoomSink, type LogDestination } from "./sonic-boom-sink.js";

/** Linux's PIPE_BUF: a write(2) of at most this many bytes to a pipe is atomic, never split or mixed with another writer's. */
export const PIPE_BUF = 4096;

/** Which descriptor is stdout, and where descriptors are reopened from; a test gives others. */
export interface StdoutSinkSource {
  readonly fd?: number;
  readonly procSelfFd?: string;
}

/** The sink for stdout's access lines: the cheaper pipe when {@link reopenPipeNonBlocking} can give one, else sonic-boom. */
export function openStdoutSink(options: AccessSinkOptions = {}, { fd = 1, procSelfFd = "/proc/self/fd" }: StdoutSinkSource = {}): AccessSink {
  const own = reopenPipeNonBlocking(fd, procSelfFd);
  if (own !== undefined) {
    try {
      return new PipeSink(own, options);
    } catch {
      // libuv would not take it as a pipe: opened at the first access line, this must not throw.
      closeQuietly(own);
    }
  }
  return sonicBoomSink(stdoutDestination(fd, options.maxQueuedBytes ?? MAX_QUEUED_BYTES), options);
}

/**
 * A new open file description of `fd`'s pipe, for writing, non-blocking; undefined when `fd` is
 * not a FIFO or cannot be reopened (no /proc, EACCES on a pipe made by another user, ENXIO when
 * nobody has it open for reading). Why a new one: O_NONBLOCK belongs to the open file
 * description, which fd 1 shares with every process that inherited it (the app, in the
 * entrypoint form); set on fd 1 it would make the app's writes fail with EAGAIN. Opening the
 * pipe again through /proc gives the process a description of its own on the same pipe.
 * Sockets (systemd's journal, a Node parent's stdio, which libuv makes socketpairs) cannot be
 * opened through /proc (ENXIO), so they stay on sonic-boom; so do files (a write to one never
 * waits on a reader, only on the disk, which the thread pool keeps off the loop) and TTYs.
 */
export function reopenPipeNonBlocking(fd: number, procSelfFd: string): number | undefined {
  let own: number | undefined;
  try {
    const stdout = fstatSync(fd);
    if (!stdout.isFIFO()) return undefined;
    own = openSync(`${procSelfFd}/${fd}`, constants.O_WRONLY | constants.O_NONBLOCK);
    const opened = fstatSync(own);
    if (opened.isFIFO() && opened.dev === stdout.dev && opened.ino === stdout.ino) return own;
  } catch {
    // Any failure leaves stdout as it was: sonic-boom writes it.
  }
  if (own !== undefined) closeQuietly(own);
  return undefined;
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Already closed by whoever failed with it.
  }
}

/**
 * sonic-boom on `fd` (stdout), asynchronous, in buffer mode (the chunks come encoded, from
 * src/access-log/line-batch.ts), each write at most PIPE_BUF bytes of whole lines, at most
 * `maxLength` bytes waiting (then chunks are dropped: see access-sink.ts).
 */
export function stdoutDestination(fd = 1, maxLength = MAX_QUEUED_BYTES): LogDestination {
  return pino.destination({ dest: fd, sync: false, maxWrite: PIPE_BUF, maxLength, contentMode: "buffer" });
}
