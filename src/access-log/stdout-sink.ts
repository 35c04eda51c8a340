// Where the process's lines go: when stdout is a pipe (what container runtimes give a container), a non-blocking descriptor of the process's own for every line; a socket no app shares (systemd's journal) too; a socket the app shares through the thread pool; else lifecycle lines written at once to fd 1 and access lines through sonic-boom.
import { closeSync, constants, fstatSync, openSync } from "node:fs";
import { pino } from "pino";
import { MAX_QUEUED_BYTES, type AccessSink } from "./access-sink.js";
import { PipeSink, type PipeSinkOptions } from "./pipe-sink.js";
import { SharedDescriptorWriter } from "./shared-descriptor-writer.js";
import { sonicBoomSink, type LogDestination } from "./sonic-boom-sink.js";

/** Linux's PIPE_BUF: a write(2) of at most this many bytes to a pipe is atomic, never split or mixed with another writer's. */
export const PIPE_BUF = 4096;

/**
 * The access lines' chunk size when no other process writes to stdout's pipe or socket (the
 * sidecar form): every write(2) to a pipe wakes its reader, which on a 2-core VM was most of
 * what the log cost per request (a cross-CPU wake-up per 4 KiB, 15 lines). A 64 KiB write may go
 * in parts when the pipe has less room, but no other writer can come between them: the sink
 * hands on the next write, lifecycle lines included, only once this one is whole (pipe-sink.ts).
 * Shared with the app, chunks stay at PIPE_BUF, so that each write(2) is atomic.
 */
export const OWN_STDOUT_CHUNK_BYTES = 64 * 1024;

/** Which descriptor is stdout, and where descriptors are reopened from; a test gives others. */
export interface StdoutSinkSource {
  readonly fd?: number;
  readonly procSelfFd?: string;
  /** The entrypoint form: the app inherits stdout's open file description, so it must stay blocking. */
  readonly sharedWithApp?: boolean;
}

/** Where the process log writes: lifecycle lines, and the access sink (opened at the first access line unless already open). */
export interface StdoutDestinations {
  /** The most bytes of whole access lines one write may take: PIPE_BUF (when absent too) unless stdout is ours alone. */
  readonly maxChunkBytes?: number;
  /** Lifecycle lines, one `write` per line: out at once when stdout takes them. */
  readonly lifecycle: pino.DestinationStream;
  openAccessSink(): AccessSink;
  /** Writes out what waits (both kinds), then closes; as {@link AccessSink.end}. */
  end(timeoutMs: number): Promise<void>;
  /** A write(2) to stdout is still in the kernel on a thread-pool thread (after end(): one that stdout never took), which process.exit() would wait for. */
  writeStuck?(): boolean;
  /** Resolves once the lifecycle lines so far are written, or after `timeoutMs`; absent where they are written at once. */
  lifecycleWritten?(timeoutMs: number): Promise<void>;
}

/**
 * stdout's destinations. A pipe (a FIFO, as container runtimes give, or an anonymous one) gets
 * one {@link PipeSink} on a non-blocking descriptor of the process's own, for both kinds of
 * line, opened now: a reader that stops, or an app that fills the shared pipe, then costs lines
 * (dropped past each bound, counted, reported when it reads again) and never blocks the event
 * loop in write(2) (issue 37.3: /healthz took 8 s and SIGTERM went unanswered). A socket the
 * app shares (the entrypoint form under systemd: its journal) gets the same sink, its chunks
 * written one at a time on the thread pool ({@link SharedDescriptorWriter}): the description
 * stays blocking for the app, and a journal that stops reading holds one pool thread, never the
 * loop (issue 52.7). Anything else keeps lifecycle lines synchronous on fd 1: a file's and a
 * terminal's writes wait on no reader.
 */
export function openStdoutDestinations(options: PipeSinkOptions = {}, source: StdoutSinkSource = {}): StdoutDestinations {
  const fd = source.fd ?? 1;
  const own = reopenPipeNonBlocking(fd, source.procSelfFd ?? "/proc/self/fd") ?? (source.sharedWithApp ? undefined : socketOfOurOwn(fd));
  let pipe: PipeSink | undefined;
  let sharedWriter: SharedDescriptorWriter | undefined;
  if (own !== undefined) {
    try {
      pipe = new PipeSink(own, options);
    } catch {
      closeQuietly(own);
    }
  } else if (source.sharedWithApp && isSocket(fd)) {
    sharedWriter = new SharedDescriptorWriter(fd);
    pipe = new PipeSink(sharedWriter, options);
  }
  if (pipe !== undefined) {
    const shared = pipe;
    return {
      maxChunkBytes: sharedWriter === undefined && !source.sharedWithApp ? OWN_STDOUT_CHUNK_BYTES : PIPE_BUF,
      lifecycle: { write: (line: string) => void shared.writeUrgent(Buffer.from(line)) },
      openAccessSink: () => shared,
      end: (timeoutMs) => shared.end(timeoutMs),
      writeStuck: () => sharedWriter?.writing ?? false,
      lifecycleWritten: (timeoutMs) => shared.lifecycleWritten(timeoutMs),
    };
  }
  let access: AccessSink | undefined;
  return {
    // sonic-boom cuts its writes at PIPE_BUF anyway (stdoutDestination).
    maxChunkBytes: PIPE_BUF,
    lifecycle: pino.destination({ dest: fd, sync: true }),
    openAccessSink: () => (access ??= sonicBoomSink(stdoutDestination(fd, options.maxQueuedBytes ?? MAX_QUEUED_BYTES), options)),
    end: async (timeoutMs) => access?.end(timeoutMs),
    // A file's write waits on the disk alone, a terminal's on no reader that can stall for good.
    writeStuck: () => false,
  };
}

/**
 * A new open file description of `fd`'s pipe, for writing, non-blocking; undefined when `fd` is
 * not a FIFO or cannot be reopened (no /proc, EACCES on a pipe made by another user, ENXIO when
 * nobody has it open for reading). Why a new one: O_NONBLOCK belongs to the open file
 * description, which fd 1 shares with every process that inherited it (the app, in the
 * entrypoint form); set on fd 1 it would make the app's writes fail with EAGAIN. Opening the
 * pipe again through /proc gives the process a description of its own on the same pipe.
 * Sockets (systemd's journal, a Node parent's stdio, which libuv makes socketpairs) cannot be
 * opened through /proc (ENXIO): see socketOfOurOwn and openStdoutDestinations. Files (a write
 * to one never waits on a reader, only on the disk, which the thread pool keeps off the loop)
 * and TTYs stay on sonic-boom.
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

/**
 * `fd` itself when it is a socket that no app shares (the sidecar form): a socket cannot be
 * reopened through /proc, but its description is then ours alone, so the pipe sink may make it
 * non-blocking. Why: a socket nobody reads (systemd's journal, stalled) would otherwise block
 * the loop in a lifecycle line's write(2) and a thread-pool thread in sonic-boom's forever, and
 * process.exit() waits for that thread: SIGTERM would never end the process. In the entrypoint
 * form the app writes through the same description, and O_NONBLOCK would hand it EAGAIN: there
 * the thread pool writes it (see openStdoutDestinations).
 */
function socketOfOurOwn(fd: number): number | undefined {
  return isSocket(fd) ? fd : undefined;
}

function isSocket(fd: number): boolean {
  try {
    return fstatSync(fd).isSocket();
  } catch {
    return false;
  }
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
