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
