// Scan tests: both tables read from a --proc-root, ENOENT on tcp6, read errors, injected readers.
import { join } from "node:path";
import t from "tap";
import { ListenerScanner, type TableReader } from "../../src/procfs/listener-scan.js";
import { decideVerdict } from "../../src/readiness/verdict.js";

const fixtures = join(import.meta.dirname, "../../proc-fixtures");
const REQUIRED = [15008];

const cases: Array<[string, number[], string[], string]> = [
  // fixture, listening ports seen, unreadable tables, verdict for [15008]
  ["listen-tcp-only", [8000, 15008], [], "present"],
  ["listen-tcp6-only", [15008], [], "present"],
  ["other-port-listening", [8000, 9090], [], "missing"],
  ["established-only", [], [], "missing"],
  ["time-wait", [], [], "missing"],
  ["ipv4-mapped", [8000], [], "missing"],
  ["header-only", [], [], "missing"],
  ["tcp6-missing", [8000, 15008], [], "present"],
  ["malformed-header", [], ["tcp"], "not enforced"],
  ["malformed-row", [], ["tcp"], "not enforced"],
  ["empty-file", [15008], ["tcp"], "present"],
  ["unreadable", [], ["tcp"], "not enforced"],
  ["found-while-other-unreadable", [8000, 15008], ["tcp6"], "present"],
  ["missing-while-other-unreadable", [8000], ["tcp6"], "not enforced"],
];

for (const [fixture, ports, unreadable, state] of cases) {
  t.test(`scan of ${fixture}`, async (t) => {
    const scan = await new ListenerScanner({ procRoot: join(fixtures, fixture) }).scan();
    t.same([...scan.listeningPorts].sort((a, b) => a - b), ports, "listening ports");
    t.same(
      scan.unreadableTables.map((entry) => entry.table),
      unreadable,
      "unreadable tables",
    );
    const verdict = decideVerdict(REQUIRED, scan);
    t.equal(verdict.state, state);
    t.equal(verdict.ready, state !== "missing");
    if (verdict.state === "missing") t.same(verdict.missing, REQUIRED);
  });
}

t.test("an unreadable table contributes no ports, even ones it listed", async (t) => {
  // malformed-row's first row is broken (a three-digit port); its second is a clean LISTEN on 8000.
  const scan = await new ListenerScanner({ procRoot: join(fixtures, "malformed-row") }).scan();
  t.notOk(scan.listeningPorts.has(8000));
});

t.test("a proc root that does not exist: tcp unreadable, tcp6 empty", async (t) => {
  const scan = await new ListenerScanner({ procRoot: join(fixtures, "no-such-dir") }).scan();
  t.same(scan.unreadableTables.map((entry) => entry.table), ["tcp"]);
  t.match(scan.unreadableTables[0]!.error, /ENOENT/);
});

t.test("read errors other than ENOENT on tcp6 make it unreadable", async (t) => {
  const header = "  sl  local_address rem_address   st\n   0: 0100007F:3AA0 00000000:0000 0A\n";
  const reads: string[] = [];
  const readTable: TableReader = async (path, onChunk) => {
    reads.push(path);
    if (path.endsWith("tcp6")) throw Object.assign(new Error("EACCES: permission denied"), { code: "EACCES" });
    onChunk(Buffer.from(header));
  };
  const scan = await new ListenerScanner({ procRoot: "/fake", readTable }).scan();
  t.same(reads, ["/fake/net/tcp", "/fake/net/tcp6"]);
  t.same([...scan.listeningPorts], [15008]);
  t.same(scan.unreadableTables, [{ table: "tcp6", error: "EACCES: permission denied" }]);
});

t.test("a read that fails halfway discards what the table had shown", async (t) => {
  const readTable: TableReader = async (path, onChunk) => {
    onChunk(Buffer.from("  sl  local_address rem_address   st\n   0: 0100007F:3AA0 00000000:0000 0A\n"));
    if (path.endsWith("/tcp")) throw Object.assign(new Error("EIO: i/o error"), { code: "EIO" });
  };
  const scan = await new ListenerScanner({ procRoot: "/fake", readTable }).scan();
  t.same([...scan.listeningPorts], [15008], "only tcp6's row counts");
  t.same(scan.unreadableTables.map((entry) => entry.table), ["tcp"]);
});

t.test("the real kernel tables parse", { skip: process.platform !== "linux" && "no /proc/net here" }, async (t) => {
  const scan = await new ListenerScanner({ procRoot: "/proc" }).scan();
  t.same(scan.unreadableTables, [], "this kernel's tables are in the format we parse");
});
