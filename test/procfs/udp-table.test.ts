// UDP table tests: the kernel's captured tables, any state counts, the whole table read, no string per row.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import t from "tap";
import { parseUdpTable } from "../../src/procfs/udp-table.js";

const fixtures = join(import.meta.dirname, "../../proc-fixtures");

t.test("bound UDP ports, connected or not, at any address", async (t) => {
  const udp = parseUdpTable(readFileSync(join(fixtures, "udp-and-unix/net/udp")));
  const udp6 = parseUdpTable(readFileSync(join(fixtures, "udp-and-unix/net/udp6")));
  t.same(udp.readable && [...udp.listeningPorts].sort((a, b) => a - b), [5353, 38980], "127.0.0.1:5353 unconnected (07), and a connected client (01) on its own port");
  t.same(udp.readable && [...udp.listenAddresses], [], "no address string per row");
  t.same(udp6.readable && [...udp6.listeningPorts], [53], "[::]:53");
});

t.test("a LISTEN-less table is read to its end, and a bad row anywhere makes it unreadable", async (t) => {
  const header = "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n";
  const row = (sl: number, port: string, st: string) => ` ${sl}: 0100007F:${port} 00000000:0000 ${st} 00000000:00000000 00:00000000 00000000     0        0 1 2 0000000000000000 0\n`;
  const parse = parseUdpTable(Buffer.from(header + row(0, "9844", "01") + row(1, "0035", "07")));
  t.same(parse.readable && [...parse.listeningPorts].sort((a, b) => a - b), [53, 38980]);
  t.match(parseUdpTable(Buffer.from(header + row(0, "0035", "07") + "garbage\n")), { readable: false, reason: /row 2 / });
  t.match(parseUdpTable(Buffer.from("")), { readable: false, reason: /empty table/ });
});
