// traceIdOf: the W3C Trace Context rules for a traceparent, as a table.
import t from "tap";
import { traceIdOf } from "../../src/access-log/trace-context.js";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const VALID = `00-${TRACE}-00f067aa0ba902b7-01`;

t.test("valid and invalid headers", async (t) => {
  const cases: Array<[string | undefined, string | undefined]> = [
    [VALID, TRACE],
    [`00-${TRACE}-00f067aa0ba902b7-00`, TRACE],
    [`01-${TRACE}-00f067aa0ba902b7-01-what-a-later-version-adds`, TRACE],
    [`01-${TRACE}-00f067aa0ba902b7-01`, TRACE],
    [undefined, undefined],
    ["", undefined],
    [`00-${TRACE}-00f067aa0ba902b7-01-extra`, undefined],
    [`ff-${TRACE}-00f067aa0ba902b7-01`, undefined],
    [`00-${"0".repeat(32)}-00f067aa0ba902b7-01`, undefined],
    [`00-${TRACE}-${"0".repeat(16)}-01`, undefined],
    [`00-${TRACE.toUpperCase()}-00f067aa0ba902b7-01`, undefined],
    [`00-${TRACE.slice(1)}-00f067aa0ba902b7-01`, undefined],
    [`00_${TRACE}-00f067aa0ba902b7-01`, undefined],
    [`00-${TRACE}-00f067aa0ba902b7-1`, undefined],
    [`01-${TRACE}-00f067aa0ba902b7-01x`, undefined],
    [` ${VALID}`, undefined],
  ];
  for (const [header, expected] of cases) t.equal(traceIdOf(header), expected, String(header));
});
