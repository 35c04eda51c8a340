// The fault boundary of one h2 stream's listeners: a defect of ours (or a node:http2 call that throws on what a peer sent) ends that stream, never the process.
import { faultAt } from "../fault-injection.js";

/**
 * Wraps an event listener of one stream's relay so that an exception in it goes to `onFault`
 * (which reports it and resets the stream) instead of up into node:http2's callback from
 * nghttp2, where nothing catches it and the process ends. Every listener a relay of one stream
 * registers goes through this: the calls that throw are spread over them (`sendTrailers` and
 * `additionalHeaders` on fields nghttp2 refuses to send, `respond` on a stream reset meanwhile).
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
