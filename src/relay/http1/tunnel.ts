// A WebSocket after its 101: two sockets joined both ways, raw bytes, what waits for a side held by octets; each side's end or error closing the other; counted for --idle-timeout when it is on.
import type { Socket } from "node:net";
import type { ProxyObserver } from "../proxy-observer.js";
import { faultAt, faultsArmed } from "../fault-injection.js";
import { HeldOctets } from "../held-octets.js";

/**
 * Octets that may wait for one side before the other side's reading stops: what node's pipe
 * allowed (its writable's mark), as octets now rather than as pieces.
 */
export const TUNNEL_WAIT_BOUND = 64 * 1024;

/**
 * A paused socket's stream keeps reading until its readable holds its mark (64 KiB of reads,
 * each its own Buffer: ~200 bytes per 1-octet read). With a mark of 1 the first read after a
 * pause stops the handle, so a paused side holds one read. The stream has no setter for it;
 * a tunnel's sockets only ever flow or pause, so the mark changes nothing else.
 */
function stopReadingAtPause(socket: Socket): void {
  const state = (socket as unknown as { _readableState?: { highWaterMark: number } })._readableState;
  if (state !== undefined) state.highWaterMark = 1;
}

/**
 * One direction, as node's pipe did it (the source's end ends the destination; the
 * destination's finish, close or error stops the flow and pauses the source) but for what
 * waits: one write at a time is in the destination's writable, and what the source reads
 * meanwhile is copied into one buffer, handed over whole when that write is done (the
 * write's callback is this direction's 'drain'). Past TUNNEL_WAIT_BOUND the source pauses
 * until then. A peer sending 1-octet pieces toward a side that does not read costs about
 * twice the bound, not a Buffer per piece.
 */
class OneWay {
  readonly #from: Socket;
  readonly #to: Socket;
  /** A defect in a callback here: the tunnel's fault boundary. */
  readonly #fault: (error: unknown) => void;
  readonly #waiting = new HeldOctets();
  /** A write of ours is in the destination's writable. */
  #writing = false;
  /** The source is paused for the octets waiting. */
  #paused = false;
  /** The destination is gone or finished: nothing more is written (pipe's unpipe). */
  #stopped = false;

  constructor(from: Socket, to: Socket, first: Buffer, fault: (error: unknown) => void) {
    this.#from = from;
    this.#to = to;
    this.#fault = fault;
    stopReadingAtPause(from);
    if (first.length > 0) this.#send(first);
    from.on("data", this.#onData);
    from.once("end", this.#onEnd);
    // Before the tunnel's own error listener, as pipe's.
    to.prependListener("error", this.#stop);
    to.once("close", this.#stop);
    to.once("finish", this.#stop);
  }

  #send(chunk: Buffer): void {
    this.#writing = true;
    this.#to.write(chunk, this.#written);
  }

  readonly #onData = (chunk: Buffer): void => {
    if (this.#stopped) return;
    try {
      if (!this.#writing) return this.#send(chunk);
      this.#waiting.append(chunk);
      if (!this.#paused && this.#waiting.length >= TUNNEL_WAIT_BOUND) {
        this.#paused = true;
        this.#from.pause();
      }
    } catch (error) {
      this.#fault(error);
    }
  };

  /** The write is out of the destination's writable (or failed: the destination is gone, and its error closes the tunnel). */
  readonly #written = (error?: Error | null): void => {
    this.#writing = false;
    if (error || this.#stopped) return;
    try {
      if (this.#waiting.length > 0) this.#send(this.#waiting.take());
      if (this.#paused) {
        this.#paused = false;
        this.#from.resume();
      }
    } catch (error) {
      this.#fault(error);
    }
  };

  /** The source's end: what waits goes first, then the destination's end. */
  readonly #onEnd = (): void => {
    if (this.#stopped) return;
    try {
      if (this.#waiting.length > 0) this.#to.write(this.#waiting.take());
      this.#to.end();
    } catch (error) {
      this.#fault(error);
    }
  };

  readonly #stop = (): void => {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#waiting.take();
    this.#from.off("data", this.#onData);
    this.#from.off("end", this.#onEnd);
    this.#to.off("error", this.#stop);
    this.#to.off("close", this.#stop);
    this.#to.off("finish", this.#stop);
    this.#from.pause();
  };
}

/**
 * Joins the client and upstream sockets. `clientRest` came from the client after its handshake
 * head, `upstreamRest` from the app after its 101; each goes first to the other side.
 * `onClosed` runs once, when the tunnel is gone (its concurrency slot is free then). A defect
 * in its callbacks closes this tunnel only, reported through `reportFault`. With `activity`
 * (only when --idle-timeout or --max-request-duration is on) the bytes each way are counted
 * for the deadlines' sweep. Returns what closes the tunnel, both sides at once.
 */
export function openTunnel(
  client: Socket,
  upstream: Socket,
  clientRest: Buffer,
  upstreamRest: Buffer,
  observer: ProxyObserver,
  onClosed: () => void,
  reportFault: (error: unknown) => void,
  activity?: { bodySent(bytes: number): void; bodyReceived(bytes: number): void },
): () => void {
  const fault = (error: unknown): void => {
    reportFault(error);
    client.destroy();
    upstream.destroy();
  };
  const contained = (handler: () => void) => () => {
    try {
      handler();
    } catch (error) {
      fault(error);
    }
  };
  observer.tunnelOpened();
  client.once(
    "close",
    contained(() => {
      upstream.destroy();
      observer.tunnelClosed();
      onClosed();
    }),
  );
  upstream.on("error", () => client.destroy());
  client.on("error", () => upstream.destroy());
  upstream.once("close", () => client.end());
  // The seam for a defect in the bytes' path is wired only when a test arms one, so a tunnel
  // pays no listener for it otherwise.
  if (faultsArmed()) {
    const seam = contained(() => faultAt("tunnel data"));
    client.on("data", seam);
    upstream.on("data", seam);
  }
  if (activity !== undefined) {
    client.on("data", (chunk: Buffer) => activity.bodyReceived(chunk.length));
    upstream.on("data", (chunk: Buffer) => activity.bodySent(chunk.length));
  }
  new OneWay(client, upstream, clientRest, fault);
  new OneWay(upstream, client, upstreamRest, fault);
  client.resume();
  upstream.resume();
  return () => {
    client.destroy();
    upstream.destroy();
  };
}
