// Scan tests: both tables read from a --proc-root, ENOENT on tcp6, read errors, injected readers.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import t from "tap";
import { createFileTableReader, ListenerScanner, type TableReader } from "../../src/procfs/listener-scan.js";
import { decideVerdict } from "../../src/readiness/verdict.js";
import type { UpstreamListener } from "../../src/readiness/upstream-listener.js";

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
  ["loopback-addresses", [8000, 8001, 15008], [], "present"],
  ["tcp6-missing", [8000, 15008], [], "present"],
  ["malformed-header", [], ["tcp"], "not enforced"],
  ["malformed-row", [], ["tcp"], "not enforced"],
  ["empty-file", [15008], ["tcp"], "present"],
  ["unreadable", [], ["tcp"], "not enforced"],
  ["found-while-other-unreadable", [8000, 15008], ["tcp6"], "present"],
  ["missing-while-other-unreadable", [8000], ["tcp6"], "not enforced"],
  ["open-requests-under-listener", [8000, 15008], [], "present"],
  ["udp-and-unix", [], [], "missing"],
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

t.test("the upstream's own port at the address the proxy connects to, over the kernel's tables", async (t) => {
  const v4: UpstreamListener = { port: 8000, hosts: ["127.0.0.1"] };
  const v6: UpstreamListener = { port: 8000, hosts: ["::1"] };
  const localhost: UpstreamListener = { port: 8000, hosts: ["127.0.0.1", "::1"] };
  const cases: Array<[string, UpstreamListener, string, string[]?]> = [
    ["loopback-addresses", v4, "missing", ["[::1]:8000"]], // python3 -m http.server --bind ::1 behind http://127.0.0.1:8000
    ["loopback-addresses", v6, "present"],
    ["loopback-addresses", localhost, "present"],
    ["loopback-addresses", { port: 8001, hosts: ["127.0.0.1"] }, "missing", ["127.0.0.2:8001"]],
    ["listen-tcp-only", v4, "present"], // 0.0.0.0
    ["listen-tcp-only", v6, "missing", ["0.0.0.0:8000"]], // an IPv4 wildcard takes no IPv6 connection
    ["ipv4-mapped", v4, "present"], // ::ffff:127.0.0.1
    ["listen-tcp6-only", { port: 15008, hosts: ["127.0.0.1"] }, "present"], // dual-stack ::
    ["header-only", v4, "missing"],
  ];
  for (const [fixture, upstream, state, unreachable] of cases) {
    const scan = await new ListenerScanner({ procRoot: join(fixtures, fixture) }).scan();
    const verdict = decideVerdict([upstream.port], scan, upstream);
    t.equal(verdict.state, state, `${fixture}, upstream ${upstream.hosts.join(" or ")}`);
    if (verdict.state === "missing") t.same(verdict.unreachable, unreachable, `${fixture}: where it does listen`);
  }
  const workers = { listeningPorts: new Set([8000]), listenAddresses: new Map([[8000, ["::1", "::1", "10.0.0.7"]]]), unreadableTables: [] };
  t.match(decideVerdict([8000], workers, v4), { state: "missing", unreachable: ["[::1]:8000", "10.0.0.7:8000"] }, "SO_REUSEPORT workers on one address: named once");
  const other = await new ListenerScanner({ procRoot: join(fixtures, "loopback-addresses") }).scan();
  t.equal(decideVerdict([8000], other).state, "present", "a port the operator requires counts at any address");
});

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

t.test("a scan reads a table only to the end of its LISTEN rows, however many connections follow", async (t) => {
  const root = mkdtempSync(join(tmpdir(), "rp-listen-section-"));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, "net"));
  const header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode";
  const rows = [header, "   0: 0100007F:3AA0 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4532 1"];
  for (let index = 1; index <= 20_000; index++) rows.push(`${String(index).padStart(4)}: 0100007F:3AA0 0100007F:${(30000 + index).toString(16).toUpperCase()} 01 00000000:00000000 00:00000000 00000000     0        0 ${5000 + index} 1`);
  writeFileSync(join(root, "net/tcp"), `${rows.join("\n")}\n`);
  writeFileSync(join(root, "net/tcp6"), `${header}\n`);
  const real = createFileTableReader();
  const bytesRead = new Map<string, number>();
  const readTable: TableReader = (path, onChunk) =>
    real(path, (chunk) => {
      bytesRead.set(path, (bytesRead.get(path) ?? 0) + chunk.length);
      return onChunk(chunk);
    });
  const scan = await new ListenerScanner({ procRoot: root, readTable }).scan();
  t.same([...scan.listeningPorts], [15008]);
  t.same(scan.unreadableTables, []);
  t.ok(bytesRead.get(join(root, "net/tcp"))! <= 4096, `one small read of a ${(rows.length * 100) >> 10} KiB table: ${bytesRead.get(join(root, "net/tcp"))} bytes`);
});

t.test("a table no required kind needs is not read, and each kind reads its own", async (t) => {
  const reads: string[] = [];
  const real = createFileTableReader();
  const readTable: TableReader = (path, onChunk) => {
    reads.push(path.slice(path.lastIndexOf("/") + 1));
    return real(path, onChunk);
  };
  const procRoot = join(fixtures, "udp-and-unix");
  await new ListenerScanner({ procRoot, readTable }).scan();
  t.same(reads.splice(0), ["tcp", "tcp6"], "TCP ports only: the TCP tables");
  const unixOnly = await new ListenerScanner({ procRoot, readTable, kinds: ["unix"] }).scan();
  t.same(reads.splice(0), ["unix"]);
  t.same([...unixOnly.listeningUnixPaths!].sort(), ["/run/app/fpm.sock", "/run/app/with space.sock", "@app-abstract"]);
  const udpOnly = await new ListenerScanner({ procRoot, readTable, kinds: ["udp"] }).scan();
  t.same(reads.splice(0), ["udp", "udp6"]);
  t.same([...udpOnly.boundUdpPorts!].sort((a, b) => a - b), [53, 5353, 38980]);
  t.same([...udpOnly.listeningPorts], [], "no UDP port counts as a TCP listener");
});

t.test("fail open per kind: an unreadable table excuses only its own kind's listeners", async (t) => {
  const unix = { kind: "unix" as const, key: "unix:/run/app.sock", path: "/run/app.sock", name: "listener-unix-app-sock" };
  const udp = { kind: "udp" as const, key: "udp:53", port: 53, name: "listener-udp-53" };
  const scan = { listeningPorts: new Set<number>(), boundUdpPorts: new Set<number>(), unreadableTables: [{ table: "unix" as const, error: "EACCES" }] };
  t.match(decideVerdict([15008], scan, undefined, [unix]), { state: "missing", missing: [15008] }, "TCP tables read: 15008 is missing; the unix listener is not reported");
  t.match(decideVerdict([], scan, undefined, [unix]), { state: "not enforced", unreadableTables: ["unix"] });
  t.match(decideVerdict([], scan, undefined, [udp, unix]), { state: "missing", missing: ["udp:53"] });
  t.match(decideVerdict([], { ...scan, boundUdpPorts: new Set([53]) }, undefined, [udp, unix]), { state: "not enforced" });
  t.match(decideVerdict([], { listeningPorts: new Set<number>(), listeningUnixPaths: new Set(["/run/app.sock"]), unreadableTables: [] }, undefined, [unix]), { state: "present", ports: ["unix:/run/app.sock"] });
});
