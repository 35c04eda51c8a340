// One HTTP/2 stream's state (RFC 9113 §5.1), windows and queued output: a plain record the connection owns, never an emitter.

/** The queue of every stream with nothing waiting: shared, never written (a stream takes an array of its own to queue). */
export const NO_QUEUE: Buffer[] = Object.freeze([]) as unknown as Buffer[];

/** Stream states of RFC 9113 §5.1 that a stream in the table can be in (idle ones are not in it, closed ones leave it). */
export const STREAM_STATE = {
  OPEN: 0,
  /** We sent END_STREAM; the peer may still send. */
  HALF_CLOSED_LOCAL: 1,
  /** The peer sent END_STREAM; we may still send. */
  HALF_CLOSED_REMOTE: 2,
  CLOSED: 3,
} as const;

/**
 * A stream of one connection. `user` is the exchange that owns it (the connection never looks at
 * it). Output the windows do not allow yet waits in `queue`, in order, with the trailers or the
 * end after it.
 */
export class H2Stream {
  state: number = STREAM_STATE.OPEN;
  /** What we may still send on this stream (RFC 9113 §6.9); may go negative when the peer shrinks INITIAL_WINDOW_SIZE. */
  sendWindow: number;
  /** What the peer may still send before we return credit. */
  receiveWindow: number;
  /** Body octets handed to the user and not yet given back with `consume`. */
  held = 0;
  /** Of `held`, the octets whose connection credit went back on arrival (an AdvanceBudget's). */
  advanced = 0;
  /** Credit given back and not yet announced in a WINDOW_UPDATE. */
  unannounced = 0;
  /** The request's (or response's) content-length, -1 without one, and the DATA octets seen so far. */
  contentLength = -1;
  received = 0;
  /** Client side: a final (non-1xx) response head has come, so the next HEADERS are trailers. */
  finalHeadSeen = false;
  /** Client side: the request was a HEAD, so its response has no content whatever its content-length says (RFC 9110 §9.3.2). */
  headRequest = false;
  /**
   * Output waiting for window: DATA payloads, then trailers or the end. NO_QUEUE while nothing
   * waits, which is nearly always: an array of its own for the stream's whole life was one V8
   * found outliving its young generation and so allocated in the old one, for every stream.
   */
  queue: Buffer[] = NO_QUEUE;
  queuedEnd = false;
  queuedTrailers: readonly string[] | undefined;
  /** The user asked to hear when queued output has gone (backpressure released). */
  wantsWritable = false;
  user: unknown;

  constructor(
    readonly id: number,
    sendWindow: number,
    receiveWindow: number,
  ) {
    this.sendWindow = sendWindow;
    this.receiveWindow = receiveWindow;
  }

  /** True once we have sent END_STREAM (or will, after the queue). */
  get localEnded(): boolean {
    return this.queuedEnd || this.queuedTrailers !== undefined || this.state === STREAM_STATE.HALF_CLOSED_LOCAL || this.state === STREAM_STATE.CLOSED;
  }

  /** True once the peer has sent END_STREAM. */
  get remoteEnded(): boolean {
    return this.state === STREAM_STATE.HALF_CLOSED_REMOTE || this.state === STREAM_STATE.CLOSED;
  }

  /** Moves the state for an END_STREAM sent (`local`) or received; returns true when the stream is now closed. */
  endOneSide(local: boolean): boolean {
    const closing = local ? STREAM_STATE.HALF_CLOSED_REMOTE : STREAM_STATE.HALF_CLOSED_LOCAL;
    this.state = this.state === closing ? STREAM_STATE.CLOSED : local ? STREAM_STATE.HALF_CLOSED_LOCAL : STREAM_STATE.HALF_CLOSED_REMOTE;
    return this.state === STREAM_STATE.CLOSED;
  }
}
