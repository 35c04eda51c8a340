// Stands in for node:assert's assert(value, message) in the bundle: node:assert is loaded only if an assertion fails.

/**
 * sonic-boom (pino's destination) requires node:assert when it is loaded, for one
 * `assert(typeof fd === 'number', message)` when a destination closes. Loading node:assert costs
 * ~1.5 ms of every start, and its error module reads process.stderr, which makes the stderr
 * stream at start. This passes a true value through and hands a false one to the real
 * assert, which throws its own AssertionError with the message given. Only the call form is
 * here: esbuild maps the bare `assert` (Makefile: --alias), which nothing else in the bundle uses.
 */
function assert(value: unknown, message?: string | Error): asserts value {
  if (value) return;
  const realAssert: (value: unknown, message?: string | Error) => void = process.getBuiltinModule("node:assert");
  realAssert(value, message);
}

export = assert;
