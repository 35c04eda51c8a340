// A client connection that writes whatever bytes a test gives it and reads back the proxy's frames: per-stream answers, PING acks, GOAWAY and the close.
import { connect, type Socket } from "node:net";
import { FLAG, FRAME, FrameReader, frameContent, staticStatusOf, type Frame } from "./h2-frames.js";

/** What came back on one stream. */
export interface StreamAnswer {
  /** The first HEADERS' `:status` when it is a static-table one, else 0 (see staticStatusOf); undefined before any HEADERS. */
  status: number | undefined;
  readonly data: Buffer[];
  /** Each HEADERS frame's header block (padding and priority stripped), in order: decode them in the connection's order. */
  readonly blocks: Buffer[];
  /** END_STREAM from the proxy. */
  ended: boolean;
  /** The RST_STREAM error code, if the proxy reset it. */
  rstCode: number | undefined;
}

export interface ClientView {
  readonly streams: ReadonlyMap<number, StreamAnswer>;
  readonly pingAcks: readonly string[];
  readonly goaway: { readonly lastStreamId: number; readonly code: number } | undefined;
  readonly closed: boolean;
}

/** One TCP connection to the proxy, nothing written yet. */
export class RawH2Client implements ClientView {
  readonly socket: Socket;
  readonly streams = new Map<number, StreamAnswer>();
  readonly pingAcks: string[] = [];
  goaway: { lastStreamId: number; code: number } | undefined;
  closed = false;
  readonly #waiters = new Set<() => void>();

  private constructor(socket: Socket) {
    this.socket = socket;
    const reader = new FrameReader((received) => this.#onFrame(received));
    socket.on("data", (chunk: Buffer) => {
      reader.push(chunk);
      this.#wake();
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      this.closed = true;
      this.#wake();
    });
  }

  static connect(port: number): Promise<RawH2Client> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, "127.0.0.1");
      socket.setNoDelay(true);
      socket.once("error", reject);
      socket.once("connect", () => {
        socket.off("error", reject);
        resolve(new RawH2Client(socket));
      });
    });
  }

  /** Resolves once the bytes are handed to the kernel (or the connection is gone). */
  write(bytes: Buffer): Promise<void> {
    if (this.closed || !this.socket.writable) return Promise.resolve();
    return new Promise((resolve) => this.socket.write(bytes, () => resolve()));
  }

  /**
   * Resolves true once `holds` does (checked now and after every read and the close), false
   * after `boundMs`: a bound on a wait for the proxy, not a way of ordering anything.
   */
  until(holds: (view: ClientView) => boolean, boundMs: number): Promise<boolean> {
    if (holds(this)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const check = (): void => {
        if (!holds(this)) return;
        finish(true);
      };
      const timer = setTimeout(() => finish(false), boundMs);
      const finish = (held: boolean): void => {
        clearTimeout(timer);
        this.#waiters.delete(check);
        resolve(held);
      };
      this.#waiters.add(check);
    });
  }

  destroy(): void {
    this.socket.destroy();
  }

  #wake(): void {
    for (const waiter of [...this.#waiters]) waiter();
  }

  #answer(streamId: number): StreamAnswer {
    let answer = this.streams.get(streamId);
    if (answer === undefined) {
      answer = { status: undefined, data: [], blocks: [], ended: false, rstCode: undefined };
      this.streams.set(streamId, answer);
    }
    return answer;
  }

  #onFrame({ type, flags, streamId, payload }: Frame): void {
    if (type === FRAME.PING && (flags & FLAG.ACK) !== 0) this.pingAcks.push(payload.toString("hex"));
    else if (type === FRAME.GOAWAY && payload.length >= 8) this.goaway = { lastStreamId: payload.readUInt32BE(0) & 0x7fffffff, code: payload.readUInt32BE(4) };
    else if (type === FRAME.RST_STREAM && payload.length === 4) this.#answer(streamId).rstCode = payload.readUInt32BE(0);
    else if (type === FRAME.HEADERS || type === FRAME.DATA) {
      const answer = this.#answer(streamId);
      const content = frameContent(type, flags, payload) ?? Buffer.alloc(0);
      if (type === FRAME.DATA) answer.data.push(content);
      else {
        answer.blocks.push(content);
        answer.status ??= staticStatusOf(content) ?? 0;
      }
      if ((flags & FLAG.END_STREAM) !== 0) answer.ended = true;
    }
  }
}
