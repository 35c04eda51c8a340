// Unix table tests: the kernel's captured table (listening, abstract, bound-only, datagram, seqpacket, embryo, a path with a space), rows, and a fuzz against a reference.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import t from "tap";
import { tierRuns } from "../helpers/fuzz-settings.js";
import { UnixTableParser, parseUnixTable } from "../../src/procfs/unix-table.js";

const fixtures = join(import.meta.dirname, "../../proc-fixtures");
const HEADER = "Num       RefCount Protocol Flags    Type St Inode Path\n";
const row = (flags: string, type: string, st: string, path = "") => `0000000000000000: 00000002 00000000 ${flags} ${type} ${st} 610128${path === "" ? "" : ` ${path}`}\n`;
const paths = (parse: ReturnType<typeof parseUnixTable>) => (parse.readable ? [...parse.listeningPaths].sort() : parse.reason);

t.test("the captured table: only listening stream sockets count", async (t) => {
  t.same(paths(parseUnixTable(readFileSync(join(fixtures, "udp-and-unix/net/unix")))), ["/run/app/fpm.sock", "/run/app/with space.sock", "@app-abstract"]);
});

t.test("given the paths a check asks about, only those are recorded", async (t) => {
  const bytes = readFileSync(join(fixtures, "udp-and-unix/net/unix"));
  const parser = new UnixTableParser(["/run/app/fpm.sock", "@app-abstract", "/run/app/bound-only.sock", "/run/app/fpm.soc"]);
  parser.push(bytes);
  t.same(paths(parser.finish()), ["/run/app/fpm.sock", "@app-abstract"], "listening and asked for; bound-only and a prefix are not");
});

t.test("rows", async (t) => {
  const cases: Array<[string, string, string[] | RegExp]> = [
    ["listening stream", HEADER + row("00010000", "0001", "01", "/run/php/fpm.sock"), ["/run/php/fpm.sock"]],
    ["abstract", HEADER + row("00010000", "0001", "01", "@name"), ["@name"]],
    ["bound, not listening", HEADER + row("00000000", "0001", "01", "/a.sock"), []],
    ["datagram", HEADER + row("00000000", "0002", "01", "/a.sock"), []],
    ["seqpacket listener", HEADER + row("00010000", "0005", "01", "/a.sock"), []],
    ["connected", HEADER + row("00000000", "0001", "03"), []],
    ["embryo, inode 0 padded", HEADER + "0000000000000000: 00000003 00000000 00000000 0001 02     0 /a.sock\n", []],
    ["listening, unbound (no path)", HEADER + row("00010000", "0001", "01"), []],
    ["UTF-8 path", HEADER + row("00010000", "0001", "01", "/run/café.sock"), ["/run/café.sock"]],
    ["no newline at the end", (HEADER + row("00010000", "0001", "01", "/a.sock")).trimEnd(), ["/a.sock"]],
    ["blank line", HEADER + "\n" + row("00010000", "0001", "01", "/a.sock"), ["/a.sock"]],
    ["short flags", HEADER + row("0010000", "0001", "01", "/a.sock"), /row 1 /],
    ["non-hex type", HEADER + row("00010000", "00x1", "01", "/a.sock"), /row 1 /],
    ["no colon after Num", HEADER + "0000000000000000 00000002 00000000 00010000 0001 01 1 /a\n", /row 1 /],
    ["no inode", HEADER + "0000000000000000: 00000002 00000000 00010000 0001 01\n", /row 1 /],
    ["a bad second row", HEADER + row("00010000", "0001", "01", "/a.sock") + "garbage\n", /row 2 /],
    ["empty", "", /empty table/],
    ["header renamed", HEADER.replace("Flags", "Flag"), /header is not the kernel's/],
    ["endless row", HEADER + row("00010000", "0001", "01", "/".repeat(5000)), /row 1 .*longer than/],
  ];
  for (const [name, text, want] of cases) {
    const got = paths(parseUnixTable(Buffer.from(text, "utf8")));
    if (want instanceof RegExp) t.match(got, want, name);
    else t.same(got, want, name);
  }
});

/** The format read literally: lines, the header's tokens, one regular expression per row. */
function referenceParse(bytes: Buffer): string[] | "unreadable" {
  const text = bytes.toString("latin1");
  const lines = text.split("\n");
  if (text.endsWith("\n")) lines.pop();
  if (text === "" || lines.some((line) => line.length > 4096)) return "unreadable";
  const tokens = lines[0]!.trim().split(/[ \t]+/);
  if (["Num", "RefCount", "Protocol", "Flags", "Type", "St", "Inode", "Path"].some((name, index) => tokens[index] !== name)) return "unreadable";
  const grammar = /^[ \t]*[0-9A-Fa-f]+:[ \t]+[0-9A-Fa-f]{8}[ \t]+[0-9A-Fa-f]{8}[ \t]+([0-9A-Fa-f]{8})[ \t]+([0-9A-Fa-f]{4})[ \t]+([0-9A-Fa-f]{2})[ \t]+[0-9]+(?: ([\s\S]+))?$/;
  const found = new Set<string>();
  for (const line of lines.slice(1)) {
    if (/^[ \t]*$/.test(line)) continue;
    const match = grammar.exec(line);
    if (!match) return "unreadable";
    if (parseInt(match[1]!, 16) === 0x10000 && parseInt(match[2]!, 16) === 1 && parseInt(match[3]!, 16) === 1 && match[4] !== undefined) found.add(Buffer.from(match[4], "latin1").toString("utf8"));
  }
  return [...found].sort();
}

const hex = (length: number) => fc.stringMatching(new RegExp(`^[0-9A-Fa-f]{${length}}$`));
const unixRow = fc
  .tuple(hex(16), fc.constantFrom("00010000", "00000000"), fc.constantFrom("0001", "0002", "0005"), fc.constantFrom("01", "02", "03"), fc.nat(99999), fc.option(fc.stringMatching(/^[@/][a-z. /@]{0,20}$/)))
  .map(([num, flags, type, st, inode, path]) => `${num}: 00000002 00000000 ${flags} ${type} ${st} ${String(inode).padStart(5)}${path === null ? "" : ` ${path}`}`);
const table = fc
  .record({ rows: fc.array(unixRow, { maxLength: 30 }), cut: fc.option(fc.nat()), flip: fc.option(fc.tuple(fc.nat(), fc.constantFrom(0x20, 0x09, 0x3a, 0x0a, 0x30, 0x41, 0x47, 0x00))) })
  .map(({ rows, cut, flip }) => {
    let bytes = Buffer.from([HEADER.trimEnd(), ...rows].join("\n") + "\n", "latin1");
    if (cut !== null) bytes = bytes.subarray(0, cut % (bytes.length + 1));
    if (flip !== null && bytes.length > 0) bytes[flip[0] % bytes.length] = flip[1];
    return bytes;
  });

t.test("fuzz: generated tables agree with the reference in any chunking", async () => {
  const runs = Number(process.env.FUZZ_RUNS ?? tierRuns(3000));
  fc.assert(
    fc.property(table, fc.integer({ min: 1, max: 200 }), (bytes, size) => {
      const parser = new UnixTableParser();
      for (let offset = 0; offset < bytes.length; offset += size) if (!parser.push(bytes.subarray(offset, offset + size))) break;
      const parse = parser.finish();
      const actual = parse.readable ? [...parse.listeningPaths].sort() : "unreadable";
      return JSON.stringify(actual) === JSON.stringify(referenceParse(bytes));
    }),
    { numRuns: runs },
  );
});
