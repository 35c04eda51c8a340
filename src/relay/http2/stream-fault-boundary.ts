// The fault boundary of one h2 stream's listeners: a defect of ours (or a node:http2 call of the h2c pool's that throws on what a peer sent) ends that stream, never the process.
import { faultAt } from "../fault-injection.js";

/**
 * Wraps a callback of one stream's relay so that an exception in it goes to `onFault` (which
 * reports it and resets the stream) instead of up into the codec's or node:http2's callback,
 * where it would cost more than its stream. Every callback a relay of one stream registers goes
 * through this: on the app's side (the h2c pool, still node:http2) the calls that throw are spread
 * over them (`sendTrailers` on fields nghttp2 refuses to send, a stream reset meanwhile).
 */
export function guardedListener<A extends unknown[]>(onFault: (error: unknown) => void, listener: (...args: A) => void): (...args: A) => void {
  return (...args: A): void => {
    try {
      faultAt("h2 stream event");
      listener(...args);
    } catch (error) {
      onFault(error);
    }
  };
}
