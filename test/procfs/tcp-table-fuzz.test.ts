// A short fuzz of the socket-table parser in every test run (a tenth of it in `make test-unit`); `make fuzz` runs a million tables (FUZZ_RUNS).
import fc from "fast-check";
import t from "tap";
import { tierRuns } from "../helpers/fuzz-settings.js";
import { agreesWithReference, parseInChunks, referenceParse, udpAgreesWithReference } from "./tcp-table-fuzz.js";

const runs = Number(process.env.FUZZ_RUNS ?? tierRuns(3000));

t.test("the reference itself, on tables whose answer is known", async (t) => {
  const header = "  sl  local_address rem_address   st tx_queue\n";
  const row = (port: string, st: string) => `   0: 0100007F:${port} 00000000:0000 ${st} 00000000:00000000\n`;
  t.same(referenceParse(Buffer.from(header + row("3AA8", "0A") + row("1F90", "01"))), { readable: true, ports: [15016] });
  t.same(referenceParse(Buffer.from(header + row("3AA8", "0X"))), { readable: false, ports: [] });
  t.same(referenceParse(Buffer.from("")), { readable: false, ports: [] });
  t.same(parseInChunks(Buffer.from(header + row("3AA8", "0A")), [3]), { readable: true, ports: [15016] });
});

t.test(`fuzz: ${runs} generated tables agree with the reference`, async (t) => {
  const started = performance.now();
  fc.assert(agreesWithReference, { numRuns: runs });
  t.pass(`${runs} tables, 0 disagreements, 0 throws`);
  t.comment(`${runs} tables in ${((performance.now() - started) / 1000).toFixed(1)} s`);
});

t.test(`fuzz: ${runs} generated tables parsed as UDP agree with the reference`, async (t) => {
  fc.assert(udpAgreesWithReference, { numRuns: runs });
  t.pass(`${runs} tables, 0 disagreements, 0 throws`);
});
