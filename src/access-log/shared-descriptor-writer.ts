// Writes chunks to a descriptor whose open file description the app shares (the entrypoint form's stdout socket), on libuv's thread pool: the loop never waits in write(2), and a write stuck in the kernel is known.
import { write } from "node:fs";
import type { ChunkWriter } from "./pipe-sink.js";

/** A retry's first wait when the description is non-blocking after all (a parent or the app made it so) and full; doubled up to the cap. */
const RETRY_FIRST_MS = 5;
const RETRY_MAX_MS = 200;

/**
 * Why the thread pool: the description stays blocking (O_NONBLOCK on it would hand the app
 * EAGAIN), a socket cannot be reopened through /proc for a description of our own, and Node has
 * no send(MSG_DONTWAIT) or pwritev2(RWF_NOWAIT). So each chunk is a fs.write, one at a time: when
 * nobody reads (a stalled journal) one pool thread waits in the kernel, never the event loop, and
 * {@link writing} says so (the exit needs to know: src/stuck-write-exit.ts).
 *
 * A blocking socket takes the whole chunk unless a signal cuts the write short: the rest is
 * written before the chunk counts as done. EAGAIN (the description is non-blocking after all: a
 * Node parent or the app set it) is retried on a timer, so it is never a busy loop.
 */
export class SharedDescriptorWriter implements ChunkWriter {
  readonly #fd: number;
  #writing = false;
  #closed = false;
  #retry: NodeJS.Timeout | undefined;

  constructor(fd: number) {
    this.#fd = fd;
  }

  /** A write(2) handed to the thread pool has not come back: when nobody reads, it may never. */
  get writing(): boolean {
    return this.#writing;
  }

  write(chunk: Buffer, done: (error?: Error | null) => void): void {
    this.#writeFrom(chunk, 0, RETRY_FIRST_MS, done);
  }

  #writeFrom(chunk: Buffer, offset: number, retryMs: number, done: (error?: Error | null) => void): void {
    if (this.#closed) return;
    this.#writing = true;
    write(this.#fd, chunk, offset, chunk.length - offset, null, (error, written) => {
      this.#writing = false;
      if (this.#closed) return;
      if (error && (error as NodeJS.ErrnoException).code === "EAGAIN") {
        this.#retry = setTimeout(() => this.#writeFrom(chunk, offset, Math.min(retryMs * 2, RETRY_MAX_MS), done), retryMs);
        // A retry waiting must not keep a process alive that has nothing else to do.
        this.#retry.unref();
        return;
      }
      if (error) return done(error);
      if (offset + written < chunk.length) return this.#writeFrom(chunk, offset + written, RETRY_FIRST_MS, done);
      done();
    });
  }

  /** Nothing more is written, and a retry waiting is cancelled; the descriptor is not ours to close (it is fd 1, the app's too). */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#retry);
  }
}
