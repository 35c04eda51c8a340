// Mutated header blocks to nghttp2 (a node:http2 server) and to our decoder: what nghttp2 refuses as COMPRESSION_ERROR we refuse too, and what it takes we read as it did.
// NGHTTP2_FUZZ_RUNS (default 150 cases) in every test run, FUZZ_RUNS / 100 for `make fuzz`; replay a failure with NGHTTP2_FUZZ_SEED and NGHTTP2_FUZZ_PATH.
import fc from "fast-check";
import http2 from "node:http2";
import net from "node:net";
import { once } from "node:events";
import t from "tap";
import { ByteBuffer } from "../../src/h2-codec/byte-buffer.js";
import { CodecError } from "../../src/h2-codec/codec-error.js";
import { FrameReader } from "../../src/h2-codec/frame-reader.js";
import { CLIENT_PREFACE } from "../../src/h2-codec/frame-types.js";
import { DECODED, HpackDecoder } from "../../src/h2-codec/hpack-decoder.js";
import { HpackEncoder } from "../../src/h2-codec/hpack-encoder.js";
import { FLAG, FRAME, frame, settingsFrame } from "../relay/http2/h2-frames.js";
import { FrameLog } from "./frame-log.js";
import { mutate, mutation } from "./hpack-fuzz-lists.js";
import { fuzzSettings } from "../helpers/fuzz-settings.js";

const { runs, seed, path } = fuzzSettings("NGHTTP2_FUZZ", { fixedSeed: 20261209, defaultRuns: 150, fuzzShare: 100 });
const CASE_BOUND_MS = 5_000;
const COMPRESSION_ERROR = 9;
/** Where we refuse what nghttp2 takes, on purpose (none expected at HPACK level: its integer and string caps are ours). */
const STRICTER: readonly RegExp[] = [];

const value = fc.stringMatching(/^[\x21-\x7e]([\x20-\x7e]{0,40}[\x21-\x7e])?$/);
const request = fc.tuple(fc.stringMatching(/^\/[a-z0-9]{0,12}$/), fc.array(fc.tuple(fc.stringMatching(/^x-[a-z]{1,8}$/), value), { maxLength: 6 }), fc.boolean()).map(([path, fields, huffmanFriendly]) => [
  ":method", "GET", ":scheme", "http", ":path", path, ":authority", huffmanFriendly ? "localhost" : "127.0.0.1", ...fields.flat(),
]);

/**
 * A field nghttp2's HTTP layer passes on (RFC 9113 §8.2.1): a lowercase token name (a pseudo-header
 * with its colon), a value of field-value octets (no control octet but HTAB, no DEL) without
 * whitespace at either end. It drops
 * the others silently (node:http2 never sees them): the codec's message checks, a later step,
 * refuse such a request instead; at HPACK level we hand them on.
 */
function nghttp2Keeps(name: string, value: string): boolean {
  return /^:?[a-z0-9!#$%&'*+.^_`|~-]+$/.test(name) && !/[\x00-\x08\x0a-\x1f\x7f]/.test(value) && !/^[ \t]|[ \t]$/.test(value);
}

/** nghttp2's verdict on the last block: refused (GOAWAY code), taken (the list node:http2 read), or reset (HPACK fine, the message not). */
type Verdict = { kind: "goaway"; code: number } | { kind: "taken"; raw: string[] } | { kind: "reset" };

t.test("mutated blocks: nghttp2's refusals are ours, its lists are ours", async (t) => {
  const received = new Map<number, string[]>();
  const server = http2.createServer();
  server.on("stream", (stream: http2.ServerHttp2Stream, _headers: http2.IncomingHttpHeaders, _flags: number, rawHeaders: string[]) => {
    // node 24 hands a session's COMPRESSION_ERROR to its open streams as 'error' events.
    stream.on("error", () => {});
    received.set(stream.id ?? 0, rawHeaders);
    stream.respond({ ":status": 204 }, { endStream: true });
  });
  server.on("sessionError", () => {});
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as net.AddressInfo).port;
  t.teardown(() => server.close());
  const verdicts = new Map<string, number>();

  await fc.assert(
    fc.asyncProperty(fc.array(request, { minLength: 1, maxLength: 5 }), mutation, async (lists, change) => {
      const encoder = new HpackEncoder();
      const out = new ByteBuffer();
      const blocks: Buffer[] = lists.map((list) => {
        out.length = out.start = 0;
        encoder.encode(list, out);
        return Buffer.from(out.buffer.subarray(0, out.length));
      });
      const lastId = blocks.length * 2 - 1;
      blocks[blocks.length - 1] = mutate(blocks[blocks.length - 1] as Buffer, change);

      // Ours.
      const decoder = new HpackDecoder();
      let ours: string[] | CodecError = [];
      for (const block of blocks) {
        const fields: string[] = [];
        try {
          if (decoder.decode(block, 0, block.length, fields) !== DECODED.OK) throw new Error("a list past the cap");
          ours = fields;
        } catch (error) {
          if (!(error instanceof CodecError)) throw error;
          ours = error;
          break;
        }
      }

      // nghttp2's: every block as a request, then a PING whose ACK says all before it was read.
      received.clear();
      const socket = net.connect(port, "127.0.0.1");
      await once(socket, "connect");
      const settled = new Promise<Verdict>((resolve) => {
        const log = new FrameLog();
        log.onGoaway = (_last, code) => resolve({ kind: "goaway", code });
        log.onPing = (_opaque, ack) => {
          if (ack) resolve(received.has(lastId) ? { kind: "taken", raw: received.get(lastId) as string[] } : { kind: "reset" });
        };
        const reader = new FrameReader(log);
        socket.on("data", (chunk: Buffer) => {
          try {
            reader.push(chunk);
          } catch {
            resolve({ kind: "goaway", code: -1 });
          }
        });
        socket.on("close", () => resolve({ kind: "goaway", code: -2 }));
        setTimeout(() => resolve({ kind: "goaway", code: -3 }), CASE_BOUND_MS).unref();
      });
      socket.write(Buffer.concat([CLIENT_PREFACE, settingsFrame([]), ...blocks.map((block, i) => frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, i * 2 + 1, block)), frame(FRAME.PING, 0, 0, Buffer.alloc(8))]));
      const theirs = await settled;
      socket.destroy();
      const kind = `${theirs.kind}${theirs.kind === "goaway" ? ` ${theirs.code}` : ""}, ours ${ours instanceof CodecError ? ours.code : "taken"}`;
      verdicts.set(kind, (verdicts.get(kind) ?? 0) + 1);
      if (theirs.kind === "goaway" && theirs.code < 0) throw new Error(`nghttp2 gave no verdict (${theirs.code})`);
      if (theirs.kind === "goaway" && theirs.code === COMPRESSION_ERROR && !(ours instanceof CodecError)) throw new Error(`nghttp2 refused a block we read as ${JSON.stringify(ours)}`);
      if (theirs.kind !== "goaway" && ours instanceof CodecError && !STRICTER.some((rule) => rule.test((ours as CodecError).message))) throw new Error(`we refused (${ours.message}) a block nghttp2 took`);
      if (theirs.kind === "taken") {
        const list = ours as string[];
        const kept = list.filter((_, at) => nghttp2Keeps(list[at - (at % 2)] as string, list[at - (at % 2) + 1] as string));
        if (JSON.stringify(theirs.raw) !== JSON.stringify(kept)) throw new Error(`nghttp2 read ${JSON.stringify(theirs.raw)}, we read ${JSON.stringify(list)}`);
      }
    }),
    { numRuns: runs, seed, ...(path !== undefined ? { path } : {}) },
  );
  t.comment(`verdicts: ${JSON.stringify(Object.fromEntries(verdicts))}`);
  t.ok([...verdicts.keys()].some((kind) => kind.startsWith("goaway 9")), "some blocks were refused by both");
  t.ok([...verdicts.keys()].some((kind) => kind.startsWith("taken")), "some were taken by both");
});
