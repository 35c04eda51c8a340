// Verdict tests: the three states from scans, missing ports ascending.
import t from "tap";
import { decideVerdict } from "../../src/readiness/verdict.js";

const scan = (ports: number[], unreadable: Array<"tcp" | "tcp6"> = []) => ({
  listeningPorts: new Set(ports),
  unreadableTables: unreadable.map((table) => ({ table, error: "x" })),
});

t.test("verdicts", async (t) => {
  t.same(decideVerdict([80, 15008], scan([15008, 80, 9])), { state: "present", ready: true, ports: [80, 15008] });
  t.same(decideVerdict([80, 443, 15008], scan([443])), {
    state: "missing",
    ready: false,
    ports: [80, 443, 15008],
    missing: [80, 15008],
  });
  t.same(decideVerdict([80, 15008], scan([80], ["tcp6"])), {
    state: "not enforced",
    ready: true,
    ports: [80, 15008],
    unreadableTables: ["tcp6"],
  });
  t.equal(decideVerdict([80], scan([80], ["tcp", "tcp6"])).state, "present", "all seen beats unreadable");
});
