// Doubles for the gRPC health service: a responder that records what a stream would carry, timers run by hand, a scanner that counts its scans.
import type { GrpcResponder } from "../../src/grpc-health/grpc-responder.js";
import { decodeHealthCheckResponse } from "../../src/grpc/health-messages.js";
import type { Scheduler } from "../../src/grpc-health/health-watchers.js";
import { isFramingError, unframeUnary } from "../../src/grpc/message-framing.js";
import type { ListenerScan } from "../../src/procfs/listener-scan.js";

/** What one stream got, in order. */
export type StreamEvent =
  | { readonly kind: "headers" }
  | { readonly kind: "message"; readonly status: number }
  | { readonly kind: "trailers"; readonly grpcStatus: number; readonly message?: string | undefined }
  | { readonly kind: "trailersOnly"; readonly grpcStatus: number; readonly message?: string | undefined };

/** Records every call; `buffering` makes sendMessage report a full window; close() and writable() play the peer. */
export class RecordingResponder implements GrpcResponder {
  readonly events: StreamEvent[] = [];
  buffering = false;
  ended = false;
  readonly #closeListeners: Array<() => void> = [];
  readonly #writableListeners: Array<() => void> = [];

  sendHeaders(): void {
    this.events.push({ kind: "headers" });
  }

  sendMessage(framed: Buffer): boolean {
    const message = unframeUnary(framed);
    if (isFramingError(message)) throw new Error("the service sent a badly framed message");
    this.events.push({ kind: "message", status: decodeHealthCheckResponse(message) });
    return !this.buffering;
  }

  sendTrailers(grpcStatus: number, message?: string): void {
    this.events.push({ kind: "trailers", grpcStatus, message });
    this.ended = true;
  }

  trailersOnly(grpcStatus: number, message?: string): void {
    this.events.push({ kind: "trailersOnly", grpcStatus, message });
    this.ended = true;
  }

  onClose(listener: () => void): void {
    this.#closeListeners.push(listener);
  }

  onWritable(listener: () => void): void {
    this.#writableListeners.push(listener);
  }

  /** The client goes away (RST_STREAM, its deadline). */
  close(): void {
    for (const listener of this.#closeListeners) listener();
  }

  writable(): void {
    this.buffering = false;
    for (const listener of this.#writableListeners) listener();
  }

  /** The statuses sent, in order. */
  get statuses(): number[] {
    return this.events.flatMap((event) => (event.kind === "message" ? [event.status] : []));
  }
}

/** A Scheduler whose timers run only when the test says. */
export class ManualScheduler implements Scheduler {
  readonly #timers = new Map<number, () => void>();
  #next = 0;

  setTimeout(run: () => void, _ms: number): unknown {
    const id = ++this.#next;
    this.#timers.set(id, run);
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.#timers.delete(handle as number);
  }

  get pending(): number {
    return this.#timers.size;
  }

  /** Runs every timer due now (all of them: the test moves the clock first). */
  runAll(): void {
    const due = [...this.#timers.values()];
    this.#timers.clear();
    for (const run of due) run();
  }
}

/** A scanner reporting whichever ports the test says listen, counting its scans. */
export class CountingScanner {
  scans = 0;
  listening = new Set<number>();

  scan(): Promise<ListenerScan> {
    this.scans++;
    return Promise.resolve({ listeningPorts: new Set(this.listening), unreadableTables: [] });
  }
}
