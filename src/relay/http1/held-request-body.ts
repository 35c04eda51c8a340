// Request body that came before its upstream connection was ready (queued or connecting): held up to a bound, then written behind the head.
import type { Socket } from "node:net";
import { writeBodyChunk } from "./body-framing.js";
import { HELD_BODY_BYTES } from "../held-body-limit.js";

/** Held up to HELD_BODY_BYTES, then the connection stops reading until the body is sent. */
export class HeldRequestBody {
  readonly #chunks: Buffer[] = [];
  #bytes = 0;

  /** Holds `chunk`; true when the held body is past the bound, so reading should stop. */
  hold(chunk: Buffer): boolean {
    this.#chunks.push(chunk);
    this.#bytes += chunk.length;
    return this.#bytes > HELD_BODY_BYTES;
  }

  /** Writes what was held, in order, framed as the forwarded head said. */
  writeTo(socket: Socket, chunked: boolean): void {
    for (const chunk of this.#chunks) writeBodyChunk(socket, chunked, chunk);
  }
}
