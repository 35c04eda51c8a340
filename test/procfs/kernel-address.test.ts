// The socket tables' hex addresses as people write them: IPv4, IPv6 in RFC 5952's compressed form, IPv4-mapped.
import t from "tap";
import { formatKernelAddress, formatSocket } from "../../src/procfs/kernel-address.js";

t.test("hex as the kernel prints it (32-bit words in little-endian order) -> the address", async (t) => {
  const cases: Array<[string, string]> = [
    ["0100007F", "127.0.0.1"],
    ["00000000", "0.0.0.0"],
    ["0200007F", "127.0.0.2"],
    ["0700000A", "10.0.0.7"],
    ["00000000000000000000000000000000", "::"],
    ["00000000000000000000000001000000", "::1"],
    ["0000000000000000FFFF00000100007F", "::ffff:127.0.0.1"],
    ["000080FE00000000FF0A5B02EB7A1DFE", "fe80::25b:aff:fe1d:7aeb"],
    ["B80D0120000000000000000001000000", "2001:db8::1"],
    ["B80D0120010000000000000001000000", "2001:db8:0:1::1"], // the longer zero run is the one compressed
    ["B80D0120000000000100000000000000", "2001:db8::1:0:0"], // of two equal runs, the first
    ["B80D0120010001000100010001000100", "2001:db8:1:1:1:1:1:1"],
    ["B80D0120010000000100010001000100", "2001:db8:0:1:1:1:1:1"], // a single zero group stays 0
    ["00000000000000000000000001000000".toLowerCase(), "::1"],
  ];
  for (const [hex, address] of cases) t.equal(formatKernelAddress(hex), address, hex);
});

t.test("a socket as the log names it", async (t) => {
  t.equal(formatSocket("127.0.0.1", 8000), "127.0.0.1:8000");
  t.equal(formatSocket("::1", 8000), "[::1]:8000");
  t.equal(formatSocket("::ffff:127.0.0.1", 8000), "[::ffff:127.0.0.1]:8000");
});
