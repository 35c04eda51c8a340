// The peer's SETTINGS as they apply now (RFC 9113 §6.5.2): each frame's entries applied to our output and open streams, in order.
import { CodecError } from "./codec-error.js";
import type { ConnectionOutput } from "./connection-output.js";
import { DEFAULT_WINDOW, MAX_WINDOW, SETTING } from "./frame-types.js";
import type { H2Stream } from "./h2-stream.js";

/** What the peer allows us: a new stream's send window, how many streams at once, and (on the output) frame and table sizes. */
export class PeerSettings {
  /** SETTINGS_INITIAL_WINDOW_SIZE: each new stream's send window. */
  initialWindow = DEFAULT_WINDOW;
  /** SETTINGS_MAX_CONCURRENT_STREAMS: unlimited until the peer says. */
  maxConcurrentStreams = 0xffffffff;
  readonly #role: "server" | "client";

  constructor(role: "server" | "client") {
    this.#role = role;
  }

  /** One SETTINGS frame's entries (6 octets each); unknown ids are ignored (§6.5.2). Throws the connection error a value calls for. */
  apply(entries: Buffer, out: ConnectionOutput, openStreams: Iterable<H2Stream>): void {
    for (let at = 0; at < entries.length; at += 6) {
      const id = entries.readUInt16BE(at);
      const value = entries.readUInt32BE(at + 2);
      if (id === SETTING.HEADER_TABLE_SIZE) out.encoder.setPeerMaxTableSize(value);
      else if (id === SETTING.MAX_CONCURRENT_STREAMS) this.maxConcurrentStreams = value;
      else if (id === SETTING.MAX_FRAME_SIZE) out.writer.maxFrameSize = value;
      else if (id === SETTING.ENABLE_PUSH && value === 1 && this.#role === "client") throw new CodecError("PROTOCOL_ERROR", "a server enabled push");
      else if (id === SETTING.INITIAL_WINDOW_SIZE) this.#rebase(value, openStreams);
    }
  }

  /** Re-bases every open stream's window by the change (RFC 9113 §6.9.2); it may go negative. */
  #rebase(initialWindow: number, openStreams: Iterable<H2Stream>): void {
    const delta = initialWindow - this.initialWindow;
    this.initialWindow = initialWindow;
    for (const stream of openStreams) {
      stream.sendWindow += delta;
      if (stream.sendWindow > MAX_WINDOW) throw new CodecError("FLOW_CONTROL_ERROR", "INITIAL_WINDOW_SIZE pushed a stream's window past 2^31-1");
    }
  }
}
