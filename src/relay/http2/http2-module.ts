// node:http2, loaded at the first HTTP/2 connection and never at start: past the bundle's alias, which stands in for undici's unused import of it.
import type * as Http2 from "node:http2";

let loaded: typeof Http2 | undefined;

/**
 * The runtime's real node:http2. `process.getBuiltinModule` is not an import, so esbuild's
 * `--alias:node:http2` (src/shims/http2-unused.ts, for undici) does not catch it, and nothing
 * loads the module (with tls and crypto behind it, ~17 ms) until the first h2 connection.
 */
export function http2(): typeof Http2 {
  return (loaded ??= process.getBuiltinModule("node:http2"));
}

let abortError: Error | undefined;

/**
 * Resets a stream with RST_STREAM and nothing before it: CANCEL (`cancel`) or INTERNAL_ERROR.
 * Not `stream.close(code)`: that ends the writable side first, and the END_STREAM it sends can
 * reach the peer before the RST_STREAM, so a cut request (or answer) would look complete.
 * `destroy()` resets at once; node maps its own AbortError to CANCEL, any other error to
 * INTERNAL_ERROR, and only `addAbortSignal` makes that AbortError (made once, on first use).
 */
export function resetStream(stream: import("node:http2").Http2Stream, cancel: boolean): void {
  if (stream.destroyed) return;
  const error = cancel ? (abortError ??= makeAbortError()) : new Error("stream reset by the proxy");
  // A stream not yet submitted has no id to reset: destroyed now, node would still submit it
  // later, ended (a cut request that looks complete); so it is reset once it is on the wire.
  if (stream.pending) stream.once("ready", () => stream.destroy(error));
  else stream.destroy(error);
}

function makeAbortError(): Error {
  const { addAbortSignal, Writable } = process.getBuiltinModule("node:stream");
  let captured: Error | undefined;
  const sink = new Writable({
    destroy(error, callback) {
      captured = error ?? undefined;
      callback(null);
    },
  });
  const controller = new AbortController();
  addAbortSignal(controller.signal, sink);
  controller.abort();
  return captured ?? new Error("aborted");
}
