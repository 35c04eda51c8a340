// What an exchange's client side asks of its app side, whatever the app speaks: http1/http1-app-side.ts (HTTP/1.1), http2/h2c-app-side.ts (h2c).

/** The app side of one request; it answers through the user interface its protocol defines (Http1AppUser, H2cAppUser). */
export interface AppSide {
  /** The app's final head came and is relayed. */
  readonly answered: boolean;
  /** The app still reads the request's body: an HTTP/1.1 app's answer ends that (the rest is discarded), an h2c app's stream does not (it may answer first and read on). */
  readonly takesBody: boolean;
  /** Admitted: a connection or stream is asked for, and the request goes on it. */
  open(): void;
  /** A piece of the client's body (copied where kept, unless `owned`); false when the client should pause. */
  sendBody(chunk: Buffer, owned: boolean): boolean;
  /** The client's body ended, with its trailers (where the app's protocol carries them). */
  endBody(trailers?: readonly string[]): void;
  /** The client took what it was given: the app is read again. */
  resume(): void;
  /** The exchange ends without the app: what is open to it is let go. */
  cancel(): void;
}
