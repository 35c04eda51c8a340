// The session differential's client: writes one case's bytes to a server in the given pieces, a PING last, and reads the answer frames until the PING's ACK, the close or the bound (the reading shared with the upstream differential's app).
import net from "node:net";
import { once } from "node:events";
import { FLAG, FRAME, FrameReader, frame, frameContent, staticStatusOf, type Frame } from "../relay/http2/h2-frames.js";

/** What came back on one connection. */
export interface Answer {
  /** RST_STREAM codes by stream, in the order they came. */
  readonly resets: Map<number, number[]>;
  /** Streams answered: the first response head's status (0 when not a static one), and whether the answer ended. */
  readonly responses: Map<number, { status: number; ended: boolean }>;
  /** The first GOAWAY's code and last stream id, if one came. */
  goaway: number | undefined;
  goawayLastStreamId: number;
  /** How the wait ended: the marker PING's ACK, the server's close (or GOAWAY with an error), or the bound. */
  end: "ack" | "closed" | "bound";
  /** The client's port, the key of the server's record. */
  clientPort: number;
}

/** The marker: a PING with this payload is the case's last frame; its ACK says the server read all before it. */
export const MARKER = Buffer.from("diffmark", "latin1");
export const MARKER_PING = frame(FRAME.PING, 0, 0, MARKER);

/**
 * Connects to `port`, writes `pieces` (each its own write, after the one before has gone), and reads
 * until the marker's ACK, the close, or `boundMs`. `onHeaderBlock` gets each response block (one
 * frame each: the servers' answers are small), for a caller that decodes them in order.
 */
export async function runCase(port: number, pieces: readonly Buffer[], boundMs: number, onHeaderBlock?: (streamId: number, block: Buffer) => void): Promise<Answer> {
  const socket = net.connect(port, "127.0.0.1");
  socket.setNoDelay(true);
  socket.on("error", () => {});
  await once(socket, "connect");
  const answer: Answer = { resets: new Map(), responses: new Map(), goaway: undefined, goawayLastStreamId: 0, end: "bound", clientPort: socket.localPort ?? 0 };
  const done = readAnswer(socket, answer, boundMs, (received) => {
    if (received.type === FRAME.HEADERS) {
      const block = frameContent(received.type, received.flags, received.payload);
      if (block !== undefined) onHeaderBlock?.(received.streamId, block);
      if (!answer.responses.has(received.streamId)) answer.responses.set(received.streamId, { status: staticStatusOf(received.payload) ?? 0, ended: (received.flags & FLAG.END_STREAM) !== 0 });
    } else if (received.type === FRAME.DATA && (received.flags & FLAG.END_STREAM) !== 0) {
      const response = answer.responses.get(received.streamId);
      if (response !== undefined) response.ended = true;
    }
  });
  await writePieces(socket, [...pieces, MARKER_PING]);
  await done;
  socket.destroy();
  return answer;
}

/** Writes each piece once the one before has gone, until the socket ends. */
export async function writePieces(socket: net.Socket, pieces: readonly Buffer[]): Promise<void> {
  for (const piece of pieces) {
    if (socket.destroyed || socket.writableEnded) break;
    await new Promise<void>((resolve) => socket.write(piece, () => resolve()));
  }
}

/**
 * Reads the peer's frames on `socket` into `answer` (its resets and first GOAWAY) until the marker
 * PING's ACK, the close (or a GOAWAY with an error), or `boundMs`; `skip` octets first (a client's
 * preface, read on the server side). `onFrame` sees every frame.
 */
export function readAnswer(socket: net.Socket, answer: Answer, boundMs: number, onFrame: (frame: Frame) => void, skip = 0): Promise<void> {
  return new Promise<void>((resolve) => {
    const reader = new FrameReader((received) => {
      onFrame(received);
      if (received.type === FRAME.RST_STREAM && received.payload.length === 4) {
        const codes = answer.resets.get(received.streamId) ?? [];
        codes.push(received.payload.readUInt32BE(0));
        answer.resets.set(received.streamId, codes);
      } else if (received.type === FRAME.GOAWAY && received.payload.length >= 8 && answer.goaway === undefined) {
        answer.goaway = received.payload.readUInt32BE(4);
        answer.goawayLastStreamId = received.payload.readUInt32BE(0) & 0x7fffffff;
        // A GOAWAY with an error ends the connection (node 20's socket may stay open a while after it): nothing more will be read.
        if (answer.goaway !== 0) {
          answer.end = "closed";
          resolve();
        }
      } else if (received.type === FRAME.PING && (received.flags & FLAG.ACK) !== 0 && received.payload.equals(MARKER)) {
        answer.end = "ack";
        resolve();
      }
    });
    let toSkip = skip;
    socket.on("data", (chunk: Buffer) => {
      const skipped = Math.min(toSkip, chunk.length);
      toSkip -= skipped;
      if (skipped < chunk.length) reader.push(chunk.subarray(skipped));
    });
    // The peer's FIN: ours follows, so that a peer that ends with a half-close (the codec) closes.
    socket.on("end", () => socket.end());
    socket.on("close", () => {
      if (answer.end === "bound") answer.end = "closed";
      resolve();
    });
    setTimeout(resolve, boundMs).unref();
  });
}
