// What an exchange's client side asks of its app side, whatever the app speaks: http1/http1-app-side.ts (HTTP/1.1), http2/h2c-app-side.ts (h2c).

/**
 * What every app side tells its exchange, whatever the app speaks. Each protocol adds how its
 * heads come (Http1AppUser, H2cAppUser). None is called after `AppSide.cancel`, nor after one of
 * the three that end the app side (`failBeforeHead`, `interceptError`, `answerCut`).
 */
export interface AppUser {
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
  /** A defect of ours in one of the app side's callbacks or timers. */
  fault(error: unknown): void;
}

/** The app side of one request; it answers through an AppUser of its protocol. */
export interface AppSide {
  /** The app's final head came and is relayed. */
  readonly answered: boolean;
  /** The app still reads the request's body: an HTTP/1.1 app's answer ends that (the rest is discarded), an h2c app's stream does not (it may answer first and read on). */
  readonly takesBody: boolean;
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
}
