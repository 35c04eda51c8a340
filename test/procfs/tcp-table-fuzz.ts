// The socket-table parsers (TCP, and UDP with the same grammar) fuzzed against a slow, obviously-correct reference: generated kernel tables, mutated, truncated, CRLF'd, random; fed in random chunks.
import fc from "fast-check";
import { TcpTableParser } from "../../src/procfs/tcp-table.js";
import { UdpTableParser } from "../../src/procfs/udp-table.js";

/**
 * The listener check's rules read literally: split into lines, check the header's tokens, match
 * each row with one regular expression, and stop after the first row that is neither LISTEN
 * (`0A`) nor an open request under a listener (`03`): the kernel prints no LISTEN row after it.
 */
export function referenceParse(bytes: Buffer, rowsThatCount: "listen" | "every" = "listen"): { readable: boolean; ports: number[] } {
  const unreadable = { readable: false, ports: [] };
  const text = bytes.toString("latin1");
  const lines = text.split("\n");
  if (text.endsWith("\n")) lines.pop(); // the newline ends the last line; nothing follows it
  if (text === "" || lines[0]!.length > 4096) return unreadable;
  const tokens = lines[0]!.trim().split(/[ \t]+/);
  const headerOk = tokens[0] === "sl" && tokens[1] === "local_address" && (tokens[2] === "rem_address" || tokens[2] === "remote_address") && tokens[3] === "st";
  if (!headerOk) return unreadable;
  const row = /^[ \t]*\d+:[ \t]+(?:[0-9A-Fa-f]{8}|[0-9A-Fa-f]{32}):([0-9A-Fa-f]{4})[ \t]+(?:[0-9A-Fa-f]{8}|[0-9A-Fa-f]{32}):[0-9A-Fa-f]{4}[ \t]+([0-9A-Fa-f]{2})(?:[ \t][\s\S]*)?$/;
  const ports = new Set<number>();
  for (const line of lines.slice(1)) {
    if (line.length > 4096) return unreadable;
    if (/^[ \t]*$/.test(line)) continue;
    const match = row.exec(line);
    if (!match) return unreadable;
    const state = parseInt(match[2]!, 16);
    if (state === 0x0a || rowsThatCount === "every") ports.add(parseInt(match[1]!, 16));
    else if (state !== 0x03) break;
  }
  return { readable: true, ports: [...ports].sort((a, b) => a - b) };
}

/** The parser under test, fed in the given chunk sizes (cycled). */
export function parseInChunks(bytes: Buffer, sizes: readonly number[], parser: TcpTableParser = new TcpTableParser()): { readable: boolean; ports: number[] } {
  let offset = 0;
  for (let index = 0; offset < bytes.length; index++) {
    const size = Math.max(1, sizes[index % sizes.length] ?? bytes.length);
    const wantsMore = parser.push(bytes.subarray(offset, offset + size));
    offset += size;
    // The reader stops where the parser says nothing further counts, as the daemon's does.
    if (!wantsMore) break;
  }
  const parsed = parser.finish();
  return parsed.readable ? { readable: true, ports: [...parsed.listeningPorts].sort((a, b) => a - b) } : { readable: false, ports: [] };
}

const hex = (length: number) => fc.stringMatching(new RegExp(`^[0-9A-Fa-f]{${length}}$`));
const blanks = fc.stringMatching(/^[ \t]{1,3}$/);
const address = fc.oneof(hex(8), hex(32));
/** Mostly LISTEN (and, on kernels before 4.4, SYN_RECV open requests under a listener), the other states the kernel prints, sometimes lower case. */
const state = fc.oneof({ weight: 4, arbitrary: fc.constantFrom("0A", "0a", "03") }, { weight: 2, arbitrary: fc.constantFrom("01", "06", "08", "0B") }, { weight: 1, arbitrary: hex(2) });

const kernelRow = fc
  .tuple(fc.nat(99999), blanks, address, hex(4), blanks, address, hex(4), blanks, state, fc.stringMatching(/^( [0-9A-F:]{1,16}){0,10}$/))
  .map(([sl, a, local, localPort, b, remote, remotePort, c, st, rest]) => `${" ".repeat(sl % 5)}${sl}:${a}${local}:${localPort}${b}${remote}:${remotePort}${c}${st}${rest}`);

const header = fc.constantFrom(
  "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
  "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
  "sl\tlocal_address\trem_address\tst",
);

/** Bytes that matter to the grammar, and some that must never be mistaken for them. */
const interestingByte = fc.constantFrom(0x20, 0x09, 0x3a, 0x0d, 0x0a, 0x30, 0x41, 0x61, 0x46, 0x47, 0x00, 0xa0, 0xff, 0x0b, 0x0c);

type Mutation = { kind: "replace" | "insert" | "delete"; at: number; byte: number };
const mutation: fc.Arbitrary<Mutation> = fc.record({ kind: fc.constantFrom("replace", "insert", "delete"), at: fc.nat(), byte: interestingByte });

function mutate(bytes: Buffer, mutations: readonly Mutation[]): Buffer {
  let out = Buffer.from(bytes);
  for (const { kind, at, byte } of mutations) {
    if (out.length === 0) break;
    const index = at % out.length;
    if (kind === "replace") out[index] = byte;
    else if (kind === "insert") out = Buffer.concat([out.subarray(0, index), Buffer.from([byte]), out.subarray(index)]);
    else out = Buffer.concat([out.subarray(0, index), out.subarray(index + 1)]);
  }
  return out;
}

/** A kernel-shaped table, then maybe mutated, truncated, turned CRLF, given a long line; or random bytes. */
export const table: fc.Arbitrary<Buffer> = fc.oneof(
  { weight: 8, arbitrary: fc
    .record({
      header,
      rows: fc.array(fc.oneof({ weight: 10, arbitrary: kernelRow }, { weight: 1, arbitrary: fc.constantFrom("", "   ", "\t") }), { maxLength: 40 }),
      trailingNewline: fc.boolean(),
      mutations: fc.oneof({ weight: 3, arbitrary: fc.constant([] as Mutation[]) }, { weight: 2, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 3 }) }),
      truncateAt: fc.option(fc.nat(), { freq: 5 }),
      crlf: fc.boolean().map((crlf) => crlf && Math.random() < 0.2),
      longLine: fc.option(fc.integer({ min: 4000, max: 4200 }), { freq: 15 }),
    })
    .map(({ header, rows, trailingNewline, mutations, truncateAt, crlf, longLine }) => {
      const lines = [header, ...rows];
      if (longLine !== null) lines.splice(1 + (longLine % (rows.length + 1)), 0, `${" ".repeat(longLine - 10)}1: x`);
      let text = lines.join(crlf ? "\r\n" : "\n") + (trailingNewline ? "\n" : "");
      if (truncateAt !== null) text = text.slice(0, truncateAt % (text.length + 1));
      return mutate(Buffer.from(text, "latin1"), mutations);
    }) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 600 }).map((bytes) => Buffer.from(bytes)) },
  { weight: 1, arbitrary: fc.constantFrom(Buffer.alloc(0), Buffer.from("\n"), Buffer.from("sl local_address rem_address st"), Buffer.from(" ".repeat(5000))) },
);

/** Chunk sizes to feed the parser with: whole, tiny, around row length, around the read buffer. */
export const chunkSizes = fc.array(fc.oneof(fc.integer({ min: 1, max: 7 }), fc.integer({ min: 100, max: 200 }), fc.constant(65_536)), { minLength: 1, maxLength: 5 });

/** The property: same verdict and ports as the reference, never a throw, never a LISTEN port the reference does not see. */
export const agreesWithReference = fc.property(table, chunkSizes, (bytes, sizes) => {
  const expected = referenceParse(bytes);
  const actual = parseInChunks(bytes, sizes);
  if (actual.readable !== expected.readable) throw new Error(`verdict: parser ${actual.readable}, reference ${expected.readable}`);
  if (actual.ports.some((port) => !expected.ports.includes(port))) throw new Error(`a LISTEN port the reference does not see: ${actual.ports} vs ${expected.ports}`);
  if (actual.ports.join() !== expected.ports.join()) throw new Error(`ports: ${actual.ports} vs ${expected.ports}`);
});

/** The UDP tables: every row a bound port, the whole table read. */
export const udpAgreesWithReference = fc.property(table, chunkSizes, (bytes, sizes) => {
  const expected = referenceParse(bytes, "every");
  const actual = parseInChunks(bytes, sizes, new UdpTableParser());
  if (actual.readable !== expected.readable || actual.ports.join() !== expected.ports.join()) throw new Error(`udp: parser ${JSON.stringify(actual)}, reference ${JSON.stringify(expected)}`);
});
