// What the one exchange (exchange.ts) asks of its app side, whatever the app speaks: http1/http1-app-side.ts (HTTP/1.1), http2/h2c-app-side.ts (h2c).
import type { Socket } from "node:net";
import type { Forwarding } from "./forward-plan.js";

/** Told when the app's read that brought a head has been parsed (an HTTP/1.1 app's connection: http1/upstream-connection.ts). */
export interface ReadEndWaiter {
  readEnded(): void;
}

/**
 * What every app side tells its exchange, whatever the app speaks. Heads come as one shape: the
 * status, the status line's text (empty from an h2c app), and the flat field list with names as
 * the app sent them (an h2c app's pseudo-headers included, which each client side skips). None
 * is called after `AppSide.cancel`, nor after one of the three that end the app side
 * (`failBeforeHead`, `interceptError`, `answerCut`).
 */
export interface AppUser {
  /** An interim (1xx) answer within the limit; false when the client's side is full (the app is not read until `AppSide.resume`). */
  interim(status: number, message: string, fields: readonly string[]): boolean;
  /** The app's final head, to be relayed (`ended`: an h2c app's END_STREAM came with it). */
  head(status: number, message: string, fields: readonly string[], ended: boolean): void;
  /** The app's trailers (an h2c app's), before its end. */
  trailers(fields: readonly string[]): void;
  /** A piece of the answer's body; false when the client's side is full (the app is not read until `AppSide.resume`). */
  data(chunk: Buffer): boolean;
  /** The answer's end (after its trailers, if any). */
  end(): void;
  /** The app's 5xx is replaced by the error page (logged already; the app let go). */
  interceptError(status: number): void;
  /** No answer will come from the app (let go): `status` is ours to send, 502 or 504. */
  failBeforeHead(status: number, error: Error, reason: string): void;
  /** The app failed after its head (logged, unless its answer was whole): the client's answer is cut, or its stream reset. */
  answerCut(): void;
  /** The client's body may come (the app has room), or, once the app is done with, be read and dropped. */
  resumeBody(): void;
  /** The client's body waits (for a stream, a new one, or room). */
  pauseBody(): void;
  /** A defect of ours in one of the app side's callbacks or timers. */
  fault(error: unknown): void;
}

/** The app side of one request; it answers through an AppUser. */
export interface AppSide {
  /** The app's final head came and is relayed. */
  readonly answered: boolean;
  /** The app still reads the request's body: an HTTP/1.1 app's answer ends that (the rest is discarded), an h2c app's stream does not (it may answer first and read on). */
  readonly takesBody: boolean;
  /** The plan the request is encoded with (forward-plan.ts), before admission; `clientAddress` goes into X-Forwarded-For. */
  forward(plan: Forwarding, clientAddress: string): void;
  /** Admitted: a connection or stream is asked for, and the request goes on it. */
  open(): void;
  /** A piece of the client's body (copied where kept: held-octets.ts); false when the client should pause. */
  sendBody(chunk: Buffer): boolean;
  /** The client's body ended, with its trailers (where the app's protocol carries them). */
  endBody(trailers?: readonly string[]): void;
  /** The client took what it was given: the app is read again. */
  resume(): void;
  /** The exchange ends without the app: what is open to it is let go. */
  cancel(): void;
  /** `waiter` hears when the app's read that brought the head has been parsed; false when the app side has no such read (h2c) or none is under way. */
  holdUntilReadEnds(waiter: ReadEndWaiter): boolean;
  /** An HTTP/1.1 client's socket stays corked while the app's read that brought the head is parsed (nothing for h2c). */
  corkClientUntilReadEnds(client: Socket): void;
}
