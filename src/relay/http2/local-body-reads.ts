// The bodies the h2 side reads itself before a local answer (the gRPC health service's): copied into one buffer, no more of each than its service needs, and ended at the head timeout when their END_STREAM never comes.
import { HeldOctets } from "../held-octets.js";
import { NO_READING } from "../../timers.js";
import type { ClientStream } from "./client-stream.js";
import { NO_STREAM_USER, type StreamUser } from "./stream-port.js";

/** The body read (whole when `ended`; else the first octets past the limit, the rest still on the stream, paused). */
export type BodyReadDone = (body: Buffer, ended: boolean) => void;

/** One body under way: the stream's user until it ends, outgrows its limit, is reset or times out. */
class BodyRead implements StreamUser {
  readonly #held = new HeldOctets();
  slot = -1;

  constructor(
    readonly reads: LocalBodyReads,
    readonly stream: ClientStream,
    readonly limit: number,
    readonly since: number,
    readonly done: BodyReadDone,
    readonly timedOut: () => void,
  ) {}

  streamData(chunk: Buffer): void {
    this.#held.append(chunk);
    if (this.#held.length > this.limit) this.#finish(false);
  }

  streamEnd(): void {
    this.#finish(true);
  }

  streamTrailers(): void {}
  streamDrain(): void {}

  /** Reset by the client while its body was read: nothing is answered. */
  streamClosed(): void {
    this.reads.forget(this);
  }

  /** No more is read here: the stream is paused for whoever takes it next. */
  stopReading(): void {
    this.reads.forget(this);
    this.stream.user = NO_STREAM_USER;
    this.stream.pause();
  }

  #finish(ended: boolean): void {
    this.stopReading();
    this.done(this.#held.take(), ended);
  }
}

/**
 * One per listener. A claimed stream's octets are handed on and credited as they come, so its
 * peer could send forever: what is kept stops at the service's limit (the rest is the app's),
 * and a body whose end has not come within the head timeout (a probe sends its whole request at
 * once) is ended by `timedOut`. The reads are an array with swap-remove (as StreamDeadlines),
 * looked at by the listener's coarse sweep, never a timer per stream.
 */
export class LocalBodyReads {
  readonly #timeoutMs: number;
  readonly #reportFault: (error: unknown) => void;
  readonly #reads: BodyRead[] = [];
  #now = NO_READING;

  /** `reportFault`: a defect of ours in one read's ending is that read's, never the sweep's. */
  constructor(timeoutMs: number, reportFault: (error: unknown) => void) {
    this.#timeoutMs = timeoutMs;
    this.#reportFault = reportFault;
  }

  /** How many bodies are being read. */
  get reading(): number {
    return this.#reads.length;
  }

  /** Reads `stream`'s body, at most `limit` octets kept, into `done`; `timedOut` if its end has not come in time. */
  read(stream: ClientStream, limit: number, done: BodyReadDone, timedOut: () => void): void {
    if (stream.remoteEnded && stream.stream.received === 0) return done(Buffer.alloc(0), true);
    const read = new BodyRead(this, stream, limit, this.#now, done, timedOut);
    read.slot = this.#reads.length;
    this.#reads.push(read);
    stream.user = read;
  }

  forget(read: BodyRead): void {
    if (read.slot < 0) return;
    const last = this.#reads.pop()!;
    if (last !== read) {
      this.#reads[read.slot] = last;
      last.slot = read.slot;
    }
    read.slot = -1;
  }

  /** One tick of the listener's coarse clock: a read under way for the timeout is ended. */
  sweep(now: number): void {
    this.#now = now;
    const reads = this.#reads;
    for (let slot = reads.length - 1; slot >= 0; slot--) {
      const read = reads[slot];
      if (read === undefined || now - read.since < this.#timeoutMs) continue;
      read.stopReading();
      try {
        read.timedOut();
      } catch (error) {
        this.#reportFault(error);
        read.stream.reset(false);
      }
    }
  }
}
