// The codec's connection on an in-memory transport, for tests: frames in as bytes, frames out parsed, every handler call recorded, the clock in the test's hands.
import type { AdvanceBudget } from "../../src/h2-codec/advance-budget.js";
import type { ReadCounter } from "../../src/h2-codec/connection-handler.js";
import { H2Connection, type H2ConnectionHandler, type H2Transport } from "../../src/h2-codec/h2-connection.js";
import type { H2Stream } from "../../src/h2-codec/h2-stream.js";
import { HpackDecoder } from "../../src/h2-codec/hpack-decoder.js";
import { FrameReader, FRAME, type Frame } from "../relay/http2/h2-frames.js";

/** A transport whose output the test reads, and whose backlog the test sets (a peer that does not read). */
export class MemoryTransport implements H2Transport {
  writableLength = 0;
  paused = false;
  ended = false;
  readonly frames: Frame[] = [];
  readonly #reader: FrameReader;
  #skipPreface: boolean;

  constructor(skipPreface: boolean) {
    this.#skipPreface = skipPreface;
    this.#reader = new FrameReader((frame) => this.frames.push(frame));
  }

  write(chunk: Buffer): boolean {
    if (this.#skipPreface) {
      chunk = chunk.subarray(24);
      this.#skipPreface = false;
    }
    this.#reader.push(Buffer.from(chunk));
    return true;
  }
  cork(): void {}
  uncork(): void {}
  pause(): void {
    this.paused = true;
  }
  resume(): void {
    this.paused = false;
  }
  end(): void {
    this.ended = true;
  }
  destroy(): void {
    this.ended = true;
  }
}

export type HandlerEvent =
  | { kind: "head"; streamId: number; fields: string[]; endStream: boolean }
  | { kind: "oversized"; streamId: number }
  | { kind: "data"; streamId: number; data: string; endStream: boolean }
  | { kind: "trailers"; streamId: number; fields: string[] }
  | { kind: "reset"; streamId: number; code: number; byPeer: boolean }
  | { kind: "writable"; streamId: number }
  | { kind: "end"; streamId: number }
  | { kind: "goaway"; lastStreamId: number; code: number }
  | { kind: "close"; code: string | undefined };

/** One connection under test. `now` is the flood budgets' clock; `onHead` may answer or throw. */
export class ConnectionUnderTest {
  readonly transport: MemoryTransport;
  readonly connection: H2Connection;
  readonly events: HandlerEvent[] = [];
  readonly faults: unknown[] = [];
  readonly streams = new Map<number, H2Stream>();
  now = 0;
  /** Called for each head after it is recorded. */
  onHead: (stream: H2Stream, endStream: boolean) => void = () => {};
  /** Consume every DATA piece at once (the default), or hold it. */
  consumeData = true;
  readonly #decoder = new HpackDecoder({ maxHeaderListSize: 1 << 20 });

  constructor(role: "server" | "client", options: { maxConcurrentStreams?: number; streamWindow?: number; connectionWindow?: number; advanceBudget?: AdvanceBudget; reads?: ReadCounter } = {}) {
    this.transport = new MemoryTransport(role === "client");
    const events = this.events;
    const handler: H2ConnectionHandler = {
      onHead: (stream, fields, _never, endStream) => {
        this.streams.set(stream.id, stream);
        events.push({ kind: "head", streamId: stream.id, fields: [...fields], endStream });
        this.onHead(stream, endStream);
      },
      onOversizedHead: (stream) => void events.push({ kind: "oversized", streamId: stream.id }),
      onData: (stream, source, start, end, endStream) => {
        const data = source.subarray(start, end);
        events.push({ kind: "data", streamId: stream.id, data: data.toString("latin1"), endStream });
        if (this.consumeData) this.connection.consume(stream, data.length);
      },
      onTrailers: (stream, fields) => void events.push({ kind: "trailers", streamId: stream.id, fields: [...fields] }),
      onReset: (stream, code, byPeer) => void events.push({ kind: "reset", streamId: stream.id, code, byPeer }),
      onStreamEnd: (stream) => void events.push({ kind: "end", streamId: stream.id }),
      onWritable: (stream) => void events.push({ kind: "writable", streamId: stream.id }),
      onGoaway: (lastStreamId, code) => void events.push({ kind: "goaway", lastStreamId, code }),
      onClose: (error) => void events.push({ kind: "close", code: error?.code }),
      onFault: (error) => void this.faults.push(error),
    };
    this.connection = new H2Connection(this.transport, handler, { role, clock: () => this.now, ...options });
  }

  /** Feeds bytes as one socket read. */
  receive(...chunks: Buffer[]): void {
    this.connection.receive(Buffer.concat(chunks));
  }

  /** Lets the microtask that writes a turn's frames run. */
  async settle(): Promise<void> {
    await Promise.resolve();
  }

  /** The frames written so far of one type (all types without one). */
  sent(type?: number): Frame[] {
    return type === undefined ? this.transport.frames : this.transport.frames.filter((frame) => frame.type === type);
  }

  /** RST_STREAM frames written, as [stream, code]. */
  resets(): [number, number][] {
    return this.sent(FRAME.RST_STREAM).map((frame) => [frame.streamId, frame.payload.readUInt32BE(0)]);
  }

  /** The GOAWAY error code written, or undefined. */
  goawayCode(): number | undefined {
    return this.sent(FRAME.GOAWAY)[0]?.payload.readUInt32BE(4);
  }

  /** Decodes a HEADERS frame we wrote (its block in one frame). */
  decodeHeaders(frame: Frame): string[] {
    const fields: string[] = [];
    this.#decoder.decode(frame.payload, 0, frame.payload.length, fields);
    return fields;
  }

  heads(): HandlerEvent[] {
    return this.events.filter((event) => event.kind === "head");
  }
}
