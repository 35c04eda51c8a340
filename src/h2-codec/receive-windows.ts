// What the peer may send us (RFC 9113 §6.9): the connection's receive window, and credit given back in batches once the data is taken, per stream and per connection.
import type { AdvanceBudget } from "./advance-budget.js";
import { CodecError } from "./codec-error.js";
import type { ConnectionOutput } from "./connection-output.js";
import { DEFAULT_WINDOW } from "./frame-types.js";
import type { H2Stream } from "./h2-stream.js";

/**
 * One per connection. Credit goes back only for octets nobody holds any more (the user took them,
 * or they were padding or dropped), so what one stream makes us hold is bounded by its window;
 * a WINDOW_UPDATE goes out once half a window has come back, not per DATA frame.
 */
export class ReceiveWindows {
  /** Each stream's receive window, which the SETTINGS announce: what one stream may hold here. */
  readonly streamWindow: number;
  readonly #connectionWindow: number;
  readonly #out: ConnectionOutput;
  /** With one, connection credit for a stream's DATA goes back on arrival while the budget lasts. */
  readonly #advance: AdvanceBudget | undefined;
  /** What the peer may still send on the connection. */
  #open = DEFAULT_WINDOW;
  /** Connection credit given back and not yet announced. */
  #unannounced = 0;

  constructor(out: ConnectionOutput, streamWindow: number, connectionWindow: number, advance?: AdvanceBudget) {
    this.#out = out;
    this.#advance = advance;
    this.streamWindow = streamWindow;
    this.#connectionWindow = connectionWindow;
  }

  /** At the start: the connection's window raised from the protocol's 65,535 to ours with one WINDOW_UPDATE. */
  announce(): void {
    if (this.#connectionWindow <= DEFAULT_WINDOW) return;
    this.#out.writer.windowUpdate(0, this.#connectionWindow - DEFAULT_WINDOW);
    this.#open = this.#connectionWindow;
  }

  /** A DATA frame's flow-controlled octets (padding counts) arrived: past the connection's window, a connection error. */
  receive(flowControlled: number): void {
    if (flowControlled > this.#open) throw new CodecError("FLOW_CONTROL_ERROR", "DATA past the connection's window");
    this.#open -= flowControlled;
  }

  /** Octets nobody holds any more give the connection's credit back. */
  returnToConnection(octets: number): void {
    if (octets === 0) return;
    this.#unannounced += octets;
    if (this.#unannounced >= this.#connectionWindow >> 1) {
      this.#out.writer.windowUpdate(0, this.#unannounced);
      this.#open += this.#unannounced;
      this.#unannounced = 0;
      this.#out.scheduleFlush();
    }
  }

  /**
   * `octets` of a stream's body were handed to its user: with room in the budget, their connection
   * credit goes back now (the stream's own window still bounds what it holds), so a reader that
   * stops holds its stream and never the connection's window.
   */
  handedOn(stream: H2Stream, octets: number): void {
    if (octets === 0 || this.#advance === undefined || !this.#advance.take(octets)) return;
    stream.advanced += octets;
    this.returnToConnection(octets);
  }

  /** `octets` the user held are taken or dropped: the budget gets back what was advanced; returns the connection credit still owed for the rest. */
  settle(stream: H2Stream, octets: number): number {
    const advanced = Math.min(octets, stream.advanced);
    if (advanced > 0) {
      stream.advanced -= advanced;
      this.#advance!.give(advanced);
    }
    return octets - advanced;
  }

  /** The same for a stream the peer may still send on (the caller checks that it is one). */
  returnToStream(stream: H2Stream, octets: number): void {
    stream.unannounced += octets;
    if (stream.unannounced >= this.streamWindow >> 1) {
      this.#out.writer.windowUpdate(stream.id, stream.unannounced);
      stream.receiveWindow += stream.unannounced;
      stream.unannounced = 0;
      this.#out.scheduleFlush();
    }
  }
}
