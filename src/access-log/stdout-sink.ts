// Where the access log's chunks go: sonic-boom on stdout (fd 1), asynchronous, bounded.
import { pino } from "pino";
import { MAX_QUEUED_BYTES, type AccessSink, type AccessSinkOptions } from "./access-sink.js";
import { sonicBoomSink, type LogDestination } from "./sonic-boom-sink.js";

/** Linux's PIPE_BUF: a write(2) of at most this many bytes to a pipe is atomic, never split or mixed with another writer's. */
export const PIPE_BUF = 4096;

/** Which descriptor is stdout; a test gives another. */
export interface StdoutSinkSource {
  readonly fd?: number;
}

/** The sink for stdout's access lines. */
export function openStdoutSink(options: AccessSinkOptions = {}, { fd = 1 }: StdoutSinkSource = {}): AccessSink {
  return sonicBoomSink(stdoutDestination(fd, options.maxQueuedBytes ?? MAX_QUEUED_BYTES), options);
}

/**
 * sonic-boom on `fd` (stdout), asynchronous, in buffer mode (the chunks come encoded, from
 * src/access-log/line-batch.ts), each write at most PIPE_BUF bytes of whole lines, at most
 * `maxLength` bytes waiting (then chunks are dropped: see access-sink.ts).
 */
export function stdoutDestination(fd = 1, maxLength = MAX_QUEUED_BYTES): LogDestination {
  return pino.destination({ dest: fd, sync: false, maxWrite: PIPE_BUF, maxLength, contentMode: "buffer" });
}
