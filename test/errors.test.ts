// The error catalogue: stable, unique codes, and the one-line usage message format.
import t from "tap";
import { ERROR_CODES, EXIT_CODES, ReadinessProxyError, errorCode, usageError } from "../src/errors.js";

t.test("codes are unique, prefixed and named after their key", async (t) => {
  const codes = Object.values(ERROR_CODES);
  t.equal(new Set(codes).size, codes.length);
  for (const [key, code] of Object.entries(ERROR_CODES)) t.equal(code, `RP_ERR_${key.replace(/[A-Z]/g, (upper) => `_${upper}`).toUpperCase()}`);
});

t.test("usage errors carry code, exit 2 and the input, expectation and value", async (t) => {
  const error = usageError("--listen", "expected [host]:port", "8080");
  t.ok(error instanceof ReadinessProxyError);
  t.equal(error.code, ERROR_CODES.usage);
  t.equal(error.exitCode, EXIT_CODES.usage);
  t.equal(error.message, '--listen: expected [host]:port, got "8080"');
  t.same(EXIT_CODES, { ok: 0, runtime: 1, usage: 2, notExecutable: 126, notFound: 127 }, "CONTRACT §7 and §8");
});

t.test("errorCode reads a string code and nothing else", async (t) => {
  t.equal(errorCode(Object.assign(new Error("x"), { code: "ENOENT" })), "ENOENT");
  t.equal(errorCode(Object.assign(new Error("x"), { code: 42 })), undefined);
  t.equal(errorCode(new Error("x")), undefined);
  t.equal(errorCode("ENOENT"), undefined);
  t.equal(errorCode(null), undefined);
});
