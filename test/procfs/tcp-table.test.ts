// Parser tests: the kernel's fixtures, chunking, malformed input, and generated random tables.
import { readFileSync, readdirSync, existsSync, statSync } from "node:fs";
import { join } from "node:path";
import t from "tap";
import { tierRuns } from "../helpers/fuzz-settings.js";
import { parseTcpTable, TcpTableParser, type TableParse } from "../../src/procfs/tcp-table.js";

const fixtures = join(import.meta.dirname, "../../proc-fixtures");
const HEADER = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n";
const HEADER6 =
  "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n";
const row = (sl: number, local: string, remote: string, st: string) =>
  `${String(sl).padStart(4)}: ${local} ${remote} ${st} 00000000:00000000 00:00000000 00000000     0        0 4312 1 0000000044e2e1d5 100 0 0 10 0\n`;

function ports(parse: TableParse): number[] | string {
  return parse.readable ? [...parse.listeningPorts].sort((a, b) => a - b) : `unreadable: ${parse.reason}`;
}

const expected: Record<string, { tcp: number[] | RegExp; tcp6: number[] | RegExp | "absent" }> = {
  "listen-tcp-only": { tcp: [8000, 15008], tcp6: [] },
  "listen-tcp6-only": { tcp: [], tcp6: [15008] },
  "other-port-listening": { tcp: [8000], tcp6: [9090] },
  "established-only": { tcp: [], tcp6: [] },
  "time-wait": { tcp: [], tcp6: [] },
  "ipv4-mapped": { tcp: [], tcp6: [8000] },
  "header-only": { tcp: [], tcp6: [] },
  "loopback-addresses": { tcp: [8001, 15008], tcp6: [8000] },
  "tcp6-missing": { tcp: [8000, 15008], tcp6: "absent" },
  "malformed-header": { tcp: /header is not the kernel's/, tcp6: [] },
  "malformed-row": { tcp: /row 1 is not in the kernel's format/, tcp6: [] },
  "empty-file": { tcp: /empty table/, tcp6: [15008] },
  "unreadable": { tcp: /directory/, tcp6: [] },
  "found-while-other-unreadable": { tcp: [8000, 15008], tcp6: /header is not the kernel's/ },
  "missing-while-other-unreadable": { tcp: [8000], tcp6: /row 1 is not in the kernel's format/ },
  "open-requests-under-listener": { tcp: [8000, 15008], tcp6: [] },
  "udp-and-unix": { tcp: [], tcp6: [] },
};

t.test("every fixture directory has an expectation", async (t) => {
  const cases = readdirSync(fixtures).filter((name) => statSync(join(fixtures, name)).isDirectory());
  t.same(cases.sort(), Object.keys(expected).sort());
});

for (const [name, want] of Object.entries(expected)) {
  t.test(`fixture ${name}`, async (t) => {
    for (const table of ["tcp", "tcp6"] as const) {
      const path = join(fixtures, name, "net", table);
      const expectation = want[table];
      if (expectation === "absent") {
        t.notOk(existsSync(path), `${table} is absent`);
        continue;
      }
      if (statSync(path).isDirectory()) {
        t.match(expectation, /directory/, `${table} is a directory: only the scan can fail on it`);
        continue;
      }
      const result = ports(parseTcpTable(readFileSync(path)));
      if (expectation instanceof RegExp) t.match(result, expectation, table);
      else t.same(result, expectation, table);
    }
  });
}

t.test("each LISTEN port's addresses, as people write them", async (t) => {
  const cases: Array<[string, "tcp" | "tcp6", Record<number, string[]>]> = [
    ["listen-tcp-only", "tcp", { 15008: ["127.0.0.1"], 8000: ["0.0.0.0"] }],
    ["listen-tcp6-only", "tcp6", { 15008: ["::"] }],
    ["ipv4-mapped", "tcp6", { 8000: ["::ffff:127.0.0.1"] }],
    ["loopback-addresses", "tcp", { 15008: ["127.0.0.1"], 8001: ["127.0.0.2"] }],
    ["loopback-addresses", "tcp6", { 8000: ["::1"] }],
    ["established-only", "tcp6", {}],
  ];
  for (const [fixture, table, want] of cases) {
    const parse = parseTcpTable(readFileSync(join(fixtures, fixture, "net", table)));
    t.ok(parse.readable);
    if (parse.readable) t.same(Object.fromEntries(parse.listenAddresses), want, `${fixture} ${table}`);
  }
  const twice = parseTcpTable(Buffer.from(HEADER + row(0, "0100007F:1F40", "00000000:0000", "0A") + row(1, "00000000:1F40", "00000000:0000", "0A") + row(2, "0100007F:1F40", "0100007F:E4DA", "01")));
  t.same(twice.readable && Object.fromEntries(twice.listenAddresses), { 8000: ["127.0.0.1", "0.0.0.0"] }, "one port on two addresses; an ESTABLISHED row adds none");
});

t.test("the same bytes give the same answer whatever the chunking", async (t) => {
  for (const name of ["listen-tcp-only", "listen-tcp6-only", "ipv4-mapped", "established-only", "malformed-row"]) {
    const bytes = readFileSync(join(fixtures, name, "net", name === "listen-tcp6-only" || name === "ipv4-mapped" ? "tcp6" : "tcp"));
    const whole = ports(parseTcpTable(bytes));
    for (const size of [1, 2, 3, 7, 13, 64, 149, 150, 151]) {
      const parser = new TcpTableParser();
      for (let offset = 0; offset < bytes.length; offset += size) parser.push(bytes.subarray(offset, offset + size));
      const parse = parser.finish();
      t.same(ports(parse), whole, `${name} in chunks of ${size}`);
      if (parse.readable && name === "ipv4-mapped") t.same(parse.listenAddresses.get(8000), ["::ffff:127.0.0.1"], `the address of a row cut in chunks of ${size}`);
    }
  }
});

t.test("push says when the rest of the table decides nothing", async (t) => {
  const parser = new TcpTableParser();
  t.equal(parser.push(Buffer.from(HEADER + row(0, "0100007F:3AA0", "00000000:0000", "0A"))), true, "still in the listening section");
  t.equal(parser.push(Buffer.from(row(1, "0100007F:3AA0", "0100007F:E4DA", "03"))), true, "an open request under a listener");
  t.equal(parser.push(Buffer.from(row(2, "0100007F:3AA0", "0100007F:E4DA", "01").slice(0, 20))), true, "half a row: undecided");
  t.equal(parser.push(Buffer.from(row(2, "0100007F:3AA0", "0100007F:E4DA", "01").slice(20))), false, "an ESTABLISHED row: done");
  t.equal(parser.push(Buffer.from("garbage\n")), false, "and stays done");
  t.same(ports(parser.finish()), [15008]);
  const broken = new TcpTableParser();
  t.equal(broken.push(Buffer.from("garbage\n")), false, "an unreadable table wants no more either");
});

t.test("rows: what counts and what makes a table unreadable", async (t) => {
  const cases: Array<[string, string, number[] | RegExp]> = [
    ["LISTEN row", HEADER + row(0, "0100007F:3AA0", "00000000:0000", "0A"), [15008]],
    ["lower-case hex", HEADER + row(0, "0100007f:3aa0", "00000000:0000", "0a"), [15008]],
    ["port only on the remote side", HEADER + row(0, "0100007F:1F40", "0100007F:3AA0", "0A"), [8000]],
    ["ESTABLISHED", HEADER + row(0, "0100007F:3AA0", "0100007F:E4DA", "01"), []],
    ["TIME_WAIT", HEADER + row(0, "0100007F:3AA0", "0100007F:E4DA", "06"), []],
    ["tcp6 row", HEADER6 + row(0, "00000000000000000000000000000000:3AA0", "00000000000000000000000000000000:0000", "0A"), [15008]],
    ["no newline after the last row", (HEADER + row(0, "0100007F:3AA0", "00000000:0000", "0A")).trimEnd(), [15008]],
    ["exactly four columns", HEADER + "   0: 0100007F:3AA0 00000000:0000 0A\n", [15008]],
    ["blank line", HEADER + "\n" + row(0, "0100007F:3AA0", "00000000:0000", "0A"), [15008]],
    ["port 0 and 65535", HEADER + row(0, "0100007F:0000", "00000000:0000", "0A") + row(1, "0100007F:FFFF", "00000000:0000", "0A"), [0, 65535]],
    ["header only, no newline", HEADER.trimEnd(), []],
    ["three columns", HEADER + "   0: 0100007F:3AA0 00000000:0000\n", /row 1 /],
    ["row longer than the kernel ever prints", HEADER + row(0, "0100007F:3AA0", "00000000:0000", "0A").replace("\n", " ".repeat(5000) + "\n"), /row 1 .*longer than/],
    ["three-digit port", HEADER + row(0, "0100007F:3AA", "00000000:0000", "0A"), /row 1 /],
    ["five-digit port", HEADER + row(0, "0100007F:3AA00", "00000000:0000", "0A"), /row 1 /],
    ["no colon in the address", HEADER + row(0, "0100007F3AA0", "00000000:0000", "0A"), /row 1 /],
    ["short address", HEADER + row(0, "7F:3AA0", "00000000:0000", "0A"), /row 1 /],
    ["bad remote", HEADER + row(0, "0100007F:3AA0", "zz:0000", "0A"), /row 1 /],
    ["three-digit state", HEADER + row(0, "0100007F:3AA0", "00000000:0000", "0A0"), /row 1 /],
    ["non-hex state", HEADER + row(0, "0100007F:3AA0", "00000000:0000", "LI"), /row 1 /],
    ["sl without colon", HEADER + "   0 0100007F:3AA0 00000000:0000 0A 0\n", /row 1 /],
    ["hex sl", HEADER + "   a: 0100007F:3AA0 00000000:0000 0A 0\n", /row 1 /],
    ["bad second row hides the first", HEADER + row(0, "0100007F:3AA0", "00000000:0000", "0A") + "garbage\n", /row 2 /],
    ["carriage returns", HEADER + row(0, "0100007F:3AA0", "00000000:0000", "0A").replace(" 0A ", " 0A\r"), /row 1 /],
    ["empty", "", /empty table/],
    ["header renamed", HEADER.replace("st", "state"), /header is not the kernel's/],
    ["header missing sl", HEADER.replace("sl", "id"), /header is not the kernel's/],
    ["rows without a header", row(0, "0100007F:3AA0", "00000000:0000", "0A"), /header is not the kernel's/],
    ["endless header", "sl".padEnd(5000, " x"), /header is not the kernel's/],
    // The kernel prints every LISTEN row before any other: the first other row ends the parse.
    ["a LISTEN row after an ESTABLISHED one is not read", HEADER + row(0, "0100007F:1F40", "0100007F:E4DA", "01") + row(1, "0100007F:3AA0", "00000000:0000", "0A"), []],
    ["nothing after the listening section is read, garbage included", HEADER + row(0, "0100007F:3AA0", "00000000:0000", "0A") + row(1, "0100007F:3AA0", "0100007F:E4DA", "06") + "garbage\n", [15008]],
    ["the row that ends the section is checked", HEADER + row(0, "0100007F:3AA0", "00000000:0000", "0A") + row(1, "0100007F:3AA", "0100007F:E4DA", "01"), /row 2 /],
    // Kernels before 4.4 printed each listener's open requests (SYN_RECV, 03) under it.
    ["open requests under a listener do not end the section", HEADER + row(0, "0100007F:3AA0", "00000000:0000", "0A") + row(1, "0100007F:3AA0", "0100007F:E4DA", "03") + row(2, "0100007F:3AA0", "0100007F:E4DB", "03") + row(3, "00000000:1F40", "00000000:0000", "0A") + row(4, "0100007F:1F40", "0100007F:E4DC", "01") + row(5, "0100007F:1F41", "00000000:0000", "0A"), [8000, 15008]],
  ];
  for (const [name, text, want] of cases) {
    const result = ports(parseTcpTable(Buffer.from(text, "latin1")));
    if (want instanceof RegExp) t.match(result, want, name);
    else t.same(result, want, name);
  }
});

/** A tiny deterministic PRNG (mulberry32), so a failure can be replayed from its seed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
}

/** The ports of the rows that really are LISTEN rows, by a slow obviously-right reading. */
function listenPortsByReference(text: string): Set<number> {
  const found = new Set<number>();
  for (const line of text.split("\n").slice(1)) {
    const fields = line.trim().split(/[ \t]+/);
    if (fields[3] === "0A" || fields[3] === "0a") found.add(parseInt(fields[1]!.slice(-4), 16));
  }
  return found;
}

t.test("generated tables: never throws, never reports a port without a 0A row", async (t) => {
  const seeds = tierRuns(300);
  const states = ["0A", "01", "06", "08", "0A", "0A"];
  for (let seed = 1; seed <= seeds; seed++) {
    const next = random(seed);
    const hex = (digits: number) => Array.from({ length: digits }, () => "0123456789ABCDEF"[Math.floor(next() * 16)]).join("");
    let text = seed % 2 ? HEADER : HEADER6;
    const rows = Math.floor(next() * 40);
    for (let index = 0; index < rows; index++) {
      const width = seed % 2 ? 8 : 32;
      text += row(index, `${hex(width)}:${hex(4)}`, `${hex(width)}:${hex(4)}`, states[Math.floor(next() * states.length)]!);
    }
    const variants = [
      text,
      text.slice(0, Math.floor(next() * text.length)),
      Buffer.from(Array.from({ length: Math.floor(next() * 400) }, () => Math.floor(next() * 256))).toString("latin1"),
      text.replace(/./g, (char) => (next() < 0.002 ? String.fromCharCode(Math.floor(next() * 256)) : char)),
    ];
    for (const variant of variants) {
      let result: TableParse;
      try {
        result = parseTcpTable(Buffer.from(variant, "latin1"));
      } catch (error) {
        t.fail(`seed ${seed}: the parser threw ${String(error)}`);
        continue;
      }
      if (!result.readable) continue;
      const allowed = listenPortsByReference(variant);
      for (const port of result.listeningPorts) {
        if (!allowed.has(port)) t.fail(`seed ${seed}: port ${port} reported without a 0A row`);
      }
    }
  }
  t.pass(`${seeds} seeds x 4 variants`);
});
