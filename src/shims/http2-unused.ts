// Stands in for node:http2 in the bundle: undici's HTTP/2 client loads it at start-up, and we never speak HTTP/2 upstream.

/**
 * undici's client-h2.js requires node:http2 when it is loaded (with undici's own fallback to
 * `{ constants: {} }` when http2 is missing, which this is), and node:http2 brings tls and
 * crypto with it: ~17 ms of every start (hyperfine). The proxy's pool never sets allowH2, so
 * no HTTP/2 session is ever made. esbuild maps node:http2 here (Makefile: --alias).
 */
export const constants = {};
