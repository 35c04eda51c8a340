// Pure parser for /proc/net/udp and /proc/net/udp6: bytes in, the locally bound ports (any state) out.
import { TcpTableParser, type TableParse } from "./tcp-table.js";

/**
 * The kernel prints the UDP tables with the TCP tables' columns (`udp4_format_sock`), so the row
 * grammar is tcp-table's, in one place. What differs: every row is a bound socket whatever its
 * state (`07` unconnected, `01` connected), and rows come in hash order, so the whole table is
 * read. In the result, `listeningPorts` are the bound ports; `listenAddresses` stays empty (no
 * string per row: a UDP server may hold thousands of sockets).
 */
export class UdpTableParser extends TcpTableParser {
  constructor() {
    super("every");
  }
}

/** Parses a whole table held in memory (tests, fixtures). */
export function parseUdpTable(bytes: Buffer): TableParse {
  const parser = new UdpTableParser();
  parser.push(bytes);
  return parser.finish();
}
