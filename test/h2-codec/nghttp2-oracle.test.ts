// HPACK and frames against nghttp2 (node:http2): our requests, written by our frame writer and encoder, read by a node:http2 server; its responses, from nghttp2's encoder, read by our reader and decoder.
// NGHTTP2_FUZZ_RUNS (default 60 connections) in every test run, FUZZ_RUNS / 100 for `make fuzz` (each connection carries up to 15 requests); replay a failure with NGHTTP2_FUZZ_SEED and NGHTTP2_FUZZ_PATH.
import fc from "fast-check";
import http2 from "node:http2";
import net from "node:net";
import { once } from "node:events";
import t from "tap";
import { FrameReader } from "../../src/h2-codec/frame-reader.js";
import { CLIENT_PREFACE, SETTING } from "../../src/h2-codec/frame-types.js";
import { FrameWriter } from "../../src/h2-codec/frame-writer.js";
import { DECODED, HpackDecoder } from "../../src/h2-codec/hpack-decoder.js";
import { HpackEncoder } from "../../src/h2-codec/hpack-encoder.js";
import { FrameLog } from "./frame-log.js";
import { fuzzSettings } from "../helpers/fuzz-settings.js";

const { runs, seed, path } = fuzzSettings("NGHTTP2_FUZZ", { fixedSeed: 20261208, defaultRuns: 60, fuzzShare: 100 });
const CASE_BOUND_MS = 5_000;

/** Fields nghttp2 takes as valid in a request (RFC 9113 §8.2: lowercase tokens, no CR/LF/NUL, no edge whitespace). */
const name = fc.oneof(
  fc.constantFrom("user-agent", "accept", "accept-encoding", "cookie", "authorization", "content-type", "grpc-timeout", "etag", "if-none-match", "x-request-id", "set-cookie"),
  fc.stringMatching(/^x-[a-z0-9-]{1,12}$/),
);
const value = fc.oneof(fc.constantFrom("", "gzip, deflate", "application/grpc", "1S", "a=b"), fc.stringMatching(/^[\x21-\x7e]([\x20-\x7e]{0,60}[\x21-\x7e])?$/));
const request = fc.record({
  method: fc.constantFrom("GET", "POST", "PUT"),
  path: fc.stringMatching(/^\/[a-z0-9/._-]{0,30}$/),
  fields: fc.array(fc.tuple(name, value), { maxLength: 12 }),
  secret: fc.boolean(),
});
const conversation = fc.record({
  requests: fc.array(request, { minLength: 1, maxLength: 15 }),
  serverTable: fc.constantFrom(0, 100, 256, 4096, 65536),
  ourTable: fc.constantFrom(0, 256, 4096),
});

interface Received {
  raw: string[];
  sensitive: string[];
}

t.test("node:http2 reads our blocks; we read its", async (t) => {
  const received = new Map<number, Received>();
  let serverTable = 4096;
  const server = http2.createServer();
  server.on("session", (session) => session.settings({ headerTableSize: serverTable }));
  server.on("stream", (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, _flags: number, rawHeaders: string[]) => {
    // node 24 hands a session's COMPRESSION_ERROR to its open streams as 'error' events.
    stream.on("error", () => {});
    const sensitive = (headers as unknown as Record<symbol, string[] | undefined>)[http2.sensitiveHeaders] ?? [];
    received.set(stream.id ?? 0, { raw: rawHeaders, sensitive });
    // The response echoes the request's own fields (names made unique), one of them sent never-indexed.
    const echoed: Record<string, string> = {};
    for (let i = 0; i < rawHeaders.length; i += 2) if (!(rawHeaders[i] as string).startsWith(":")) echoed[`echo-${rawHeaders[i]}`] = rawHeaders[i + 1] as string;
    stream.respond({ ":status": 200, ...echoed, [http2.sensitiveHeaders]: ["echo-x-request-id"] }, { endStream: true });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as net.AddressInfo).port;
  t.teardown(() => server.close());
  t.comment(`seed ${seed}, ${runs} connections`);

  await fc.assert(
    fc.asyncProperty(conversation, async ({ requests, serverTable: table, ourTable }) => {
      serverTable = table;
      received.clear();
      const socket = net.connect(port, "127.0.0.1");
      await once(socket, "connect");
      const writer = new FrameWriter();
      const encoder = new HpackEncoder();
      const decoder = new HpackDecoder();
      const responses = new Map<number, (fields: string[] | Error) => void>();
      const log = new FrameLog();
      let settingsAcked = false;
      log.onSettings = (entries) => {
        for (let at = 0; at < entries.length; at += 6) {
          if (entries.readUInt16BE(at) === SETTING.HEADER_TABLE_SIZE) encoder.setPeerMaxTableSize(entries.readUInt32BE(at + 2));
          if (entries.readUInt16BE(at) === SETTING.MAX_FRAME_SIZE) writer.maxFrameSize = entries.readUInt32BE(at + 2);
        }
        writer.settingsAck();
        for (const piece of writer.flush()) socket.write(piece);
      };
      log.onSettingsAck = () => {
        settingsAcked = true;
        decoder.setMaxTableSize(ourTable);
      };
      log.onHeaders = (streamId, source, start, end) => {
        const fields: string[] = [];
        const verdict = decoder.decode(source, start, end, fields);
        const neverNames = decoder.neverIndexed.map((at) => fields[at]);
        responses.get(streamId)?.(verdict === DECODED.OK && neverNames.includes("echo-x-request-id") === fields.includes("echo-x-request-id") ? fields : new Error(`response refused or never-indexed lost: ${verdict} ${neverNames.join()}`));
      };
      log.onGoaway = (last, code) => {
        for (const answer of responses.values()) answer(new Error(`GOAWAY ${code} after ${last}`));
      };
      const reader = new FrameReader(log);
      socket.on("data", (chunk: Buffer) => reader.push(chunk));
      socket.write(CLIENT_PREFACE);
      writer.settings([[SETTING.HEADER_TABLE_SIZE, ourTable]]);
      try {
        for (const [i, { method, path, fields, secret }] of requests.entries()) {
          const streamId = 2 * i + 1;
          const list = [":method", method, ":scheme", "http", ":path", path, ":authority", "localhost", ...fields.flat(), ...(secret ? ["x-request-id", `secret-${i}`] : [])];
          const never = secret ? [list.length - 2] : [];
          const answered = new Promise<string[] | Error>((resolve) => responses.set(streamId, resolve));
          writer.headers(streamId, list, true, encoder, never);
          for (const piece of writer.flush()) socket.write(piece);
          const timer = setTimeout(() => responses.get(streamId)?.(new Error(`no response on stream ${streamId}`)), CASE_BOUND_MS);
          const response = await answered;
          clearTimeout(timer);
          if (response instanceof Error) throw response;
          const got = received.get(streamId);
          if (JSON.stringify(got?.raw) !== JSON.stringify(list)) throw new Error(`node:http2 read ${JSON.stringify(got?.raw)}, we sent ${JSON.stringify(list)}`);
          const sentNever = list.filter((_, at) => at % 2 === 0 && (never.includes(at) || list[at] === "authorization" || (list[at] === "cookie" && (list[at + 1] as string).length < 20)));
          if (JSON.stringify([...new Set(got?.sensitive)].sort()) !== JSON.stringify([...new Set(sentNever)].sort())) throw new Error(`never-indexed: node:http2 saw ${JSON.stringify(got?.sensitive)}, we sent ${JSON.stringify(sentNever)}`);
          const expected = [":status", "200"];
          const echoed = new Map<string, string>();
          for (let at = 8; at < list.length; at += 2) echoed.set(`echo-${list[at]}`, list[at + 1] as string);
          for (const [echoName, echoValue] of echoed) expected.push(echoName, echoValue);
          const withoutDate = response.filter((_, at, all) => all[at - (at % 2)] !== "date");
          if (JSON.stringify(withoutDate) !== JSON.stringify(expected)) throw new Error(`we read ${JSON.stringify(response)}, node:http2 sent ${JSON.stringify(expected)} and a date`);
        }
        if (!settingsAcked) throw new Error("node:http2 never acknowledged our SETTINGS");
      } finally {
        socket.destroy();
      }
    }),
    { numRuns: runs, seed, ...(path !== undefined ? { path } : {}) },
  );
  t.pass("agreed");
});
