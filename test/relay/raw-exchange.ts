// One raw client connection: request bytes written in given pieces, responses read back by a small parser, and who closed the connection.
import { connect } from "node:net";
import { setImmediate as nextTurn } from "node:timers/promises";

/**
 * Reads HTTP/1.x responses from a byte stream, as a client that knows which requests it sent:
 * heads, then bodies framed by Content-Length, chunked, or the connection's end. 1xx heads are
 * interim. `isHead(index)` tells whether the index-th final response answers a HEAD request.
 */
export class ResponseReader {
  /** Statuses of the interim (1xx) responses. */
  readonly interim: number[] = [];
  /** Statuses of the final responses whose body is complete. */
  readonly finals: number[] = [];
  /** Their bodies, decoded. */
  readonly bodies: Buffer[] = [];
  /** Set when the bytes are not a response: the rest is not parsed. */
  malformed = false;
  readonly #isHead: (index: number) => boolean;
  #buffer: Buffer = Buffer.alloc(0);
  /** The response being read: its status and how much body is left. */
  #body: { status: number; left: number | "chunked" | "until close"; data: Buffer[] } | undefined;

  constructor(isHead: (index: number) => boolean) {
    this.#isHead = isHead;
  }

  push(chunk: Buffer): void {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    // Each turn consumes a head, a body or a chunk; bounded by the bytes received.
    while (!this.malformed && this.#step());
  }

  /** The connection ended: a body read until close is complete now. */
  end(): void {
    if (this.#body?.left === "until close") this.#finish();
  }

  #step(): boolean {
    const body = this.#body;
    if (body === undefined) return this.#readHead();
    if (body.left === "until close") {
      body.data.push(this.#buffer);
      this.#buffer = Buffer.alloc(0);
      return false;
    }
    if (body.left !== "chunked") {
      const taken = Math.min(body.left, this.#buffer.length);
      body.data.push(this.#buffer.subarray(0, taken));
      this.#buffer = this.#buffer.subarray(taken);
      body.left -= taken;
      if (body.left > 0) return false;
      this.#finish();
      return true;
    }
    const lineEnd = this.#buffer.indexOf("\r\n");
    if (lineEnd < 0) return false;
    const size = parseInt(this.#buffer.subarray(0, lineEnd).toString("latin1"), 16);
    if (!Number.isSafeInteger(size)) return this.#fail();
    if (size > 0) {
      if (this.#buffer.length < lineEnd + 2 + size + 2) return false;
      body.data.push(this.#buffer.subarray(lineEnd + 2, lineEnd + 2 + size));
      this.#buffer = this.#buffer.subarray(lineEnd + 2 + size + 2);
      return true;
    }
    // The last chunk, then trailer lines up to an empty one.
    const trailerEnd = this.#buffer.indexOf("\r\n\r\n", lineEnd);
    if (trailerEnd < 0) return false;
    this.#buffer = this.#buffer.subarray(trailerEnd + 4);
    this.#finish();
    return true;
  }

  #readHead(): boolean {
    const headEnd = this.#buffer.indexOf("\r\n\r\n");
    if (headEnd < 0) return false;
    const head = this.#buffer.subarray(0, headEnd).toString("latin1");
    this.#buffer = this.#buffer.subarray(headEnd + 4);
    const status = /^HTTP\/1\.[01] (\d{3})(?: [^\r\n]*)?(?:\r\n|$)/.exec(head);
    if (!status) return this.#fail();
    const code = Number(status[1]);
    if (code < 200) {
      this.interim.push(code);
      return true;
    }
    const length = /\r\ncontent-length: *(\d+) *(?:\r\n|$)/i.exec(head);
    const left = this.#isHead(this.finals.length) || code === 204 || code === 304 ? 0 : /\r\ntransfer-encoding: *chunked *(?:\r\n|$)/i.test(head) ? "chunked" : length ? Number(length[1]) : "until close";
    this.#body = { status: code, left, data: [] };
    return true;
  }

  #finish(): void {
    this.finals.push(this.#body!.status);
    this.bodies.push(Buffer.concat(this.#body!.data));
    this.#body = undefined;
  }

  #fail(): false {
    this.malformed = true;
    return false;
  }
}

export interface ExchangeOptions {
  /** The request bytes, written one piece at a time with a turn of the event loop between. */
  readonly pieces: readonly Buffer[];
  /** Final responses to wait for before the next step; the connection closing also ends the wait. */
  readonly responses: number;
  /** Whether the index-th final response answers a HEAD request. */
  readonly isHead?: (index: number) => boolean;
  /** After those responses: half-close and wait for the peer to close, or wait for it to close on its own. */
  readonly then: "half-close" | "await-close";
  /** The whole exchange's bound: past it the connection is destroyed and `timedOut` says where it stood. */
  readonly timeoutMs: number;
  /** A shorter bound for the wait for the close, once the responses are in. */
  readonly closeWaitMs?: number;
}

export interface ExchangeResult {
  readonly interim: readonly number[];
  readonly finals: readonly number[];
  /** The final responses' bodies, latin1. */
  readonly bodies: readonly string[];
  /** The responses did not parse. */
  readonly malformed: boolean;
  /** The peer ended or reset the connection before we half-closed it. */
  readonly closedByPeer: boolean;
  /** Undefined, or what was still awaited when the bound ran out. */
  readonly timedOut: "writing" | "responses" | "close" | undefined;
  /** Everything received, latin1, for failure messages. */
  readonly received: string;
}

/** One connection to 127.0.0.1:`port`: writes the pieces, reads responses, ends as `then` says. */
export function exchange(port: number, options: ExchangeOptions): Promise<ExchangeResult> {
  const reader = new ResponseReader(options.isHead ?? (() => false));
  const received: Buffer[] = [];
  const socket = connect(port, "127.0.0.1");
  socket.setNoDelay(true);
  let closedByPeer = false;
  let halfClosed = false;
  let closed = false;
  let written = false;
  let stage: "writing" | "responses" | "close" = "writing";
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout;
    const finish = (timedOut: ExchangeResult["timedOut"]) => {
      clearTimeout(timer);
      socket.destroy();
      reader.end();
      resolve({ interim: reader.interim, finals: reader.finals, bodies: reader.bodies.map((body) => body.toString("latin1")), malformed: reader.malformed, closedByPeer, timedOut, received: Buffer.concat(received).toString("latin1") });
    };
    timer = setTimeout(() => finish(stage), options.timeoutMs);
    const next = () => {
      if (closed || !written || stage !== "responses" || reader.finals.length < options.responses) return;
      stage = "close";
      if (options.closeWaitMs !== undefined) {
        clearTimeout(timer);
        timer = setTimeout(() => finish(stage), options.closeWaitMs);
      }
      if (options.then === "half-close") {
        halfClosed = true;
        socket.end();
      }
    };
    socket.on("data", (chunk: Buffer) => {
      received.push(chunk);
      reader.push(chunk);
      next();
    });
    socket.on("end", () => {
      if (!halfClosed) closedByPeer = true;
    });
    socket.on("error", (error: NodeJS.ErrnoException) => {
      // EPIPE: a piece written after the proxy closed (make fuzz, RELAY_FUZZ_SEED=-1778655843: it
      // refused a body while later pieces were still going out); that close is the proxy's too.
      if (!halfClosed && (error.code === "ECONNRESET" || error.code === "EPIPE")) closedByPeer = true;
    });
    socket.on("close", () => {
      closed = true;
      finish(undefined);
    });
    const writePieces = async () => {
      for (const piece of options.pieces) {
        if (closed || !socket.writable) break;
        socket.write(piece);
        await nextTurn();
      }
      written = true;
      stage = "responses";
      next();
    };
    // A throw while writing closes the socket, which finishes the exchange as a close.
    socket.on("connect", () => {
      writePieces().catch((error: unknown) => socket.destroy(error as Error));
    });
  });
}

/** Bytes as they would be typed in a JavaScript string: for failure messages that can be replayed. */
export function showBytes(bytes: Buffer | string): string {
  return JSON.stringify(typeof bytes === "string" ? bytes : bytes.toString("latin1"));
}
