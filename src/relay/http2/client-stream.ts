// One client's h2 stream on the listener, as the exchanges and local answers use it: the codec's server side (stream-port.ts) with the answer's heads, and held until routed.
import { H2_ERROR } from "../../h2-codec/codec-error.js";
import type { H2Connection } from "../../h2-codec/h2-connection.js";
import type { H2Stream } from "../../h2-codec/h2-stream.js";
import { fieldValue } from "../../h2-codec/field-list.js";
import { NO_STREAM_USER, StreamPort } from "./stream-port.js";
import { httpDate } from "../http-date.js";

/** A request's stream; its trailers come to the user as the codec's flat list. */
export class ClientStream extends StreamPort {
  headersSent = false;

  constructor(connection: H2Connection, stream: H2Stream, reportFault: (error: unknown) => void) {
    super(connection, stream, reportFault, NO_STREAM_USER);
    // Until it is routed (after the read that brought its head), what comes waits: a reset in that read means it is never routed.
    this.holding = true;
  }

  /** Routed: what waited is handed on (unless the router paused it). */
  release(): void {
    this.holding = false;
    this.deliverLater();
  }

  /**
   * The response head, a flat `[name, value, ...]` list with `:status` first and names
   * lower-case; `endStream` when there is no body. Every final answer is dated, as the HTTP/1.1
   * side dates its own: a `date` is added when the list has none.
   */
  respond(fields: string[], endStream: boolean): void {
    if (this.closed || this.headersSent) return;
    this.headersSent = true;
    if (fieldValue(fields, "date") === undefined) fields.push("date", httpDate());
    this.connection.respond(this.stream, fields, endStream);
  }

  /** A 1xx head before the final one (a flat list as for `respond`). */
  additionalHeaders(fields: readonly string[]): void {
    if (this.closed || this.headersSent) return;
    this.connection.respond(this.stream, fields, false);
  }

  /**
   * Our answer is whole and the rest of the request is not wanted: RST_STREAM NO_ERROR (RFC 9113
   * §8.1), so the client stops sending instead of the stream waiting for an END_STREAM.
   */
  stopRequest(): void {
    if (this.closed) return;
    this.connection.reset(this.stream, H2_ERROR.NO_ERROR);
    this.closeWith(H2_ERROR.NO_ERROR);
  }

  /** A client's RST_STREAM NO_ERROR still cut its request: never "completed" to the exchange. */
  override wasReset(code: number): void {
    super.wasReset(code === H2_ERROR.NO_ERROR ? H2_ERROR.CANCEL : code);
  }
}
