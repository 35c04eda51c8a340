// The upstream differential's two clients, the codec's client side (as the h2c pool and the gRPC probe open it) and node:http2's (nghttp2), each writing down per stream what reached its user.
import http2 from "node:http2";
import net from "node:net";
import type { H2ConnectionHandler } from "../../src/h2-codec/h2-connection.js";
import { connectionOnSocket } from "../../src/h2-codec/socket-binding.js";
import { FLAG } from "../relay/http2/h2-frames.js";
import type { ScriptedApp } from "./upstream-app.js";
import type { ClientOutcome } from "./upstream-compare.js";
import type { Method } from "./upstream-script.js";

/** What one stream's user got: 1xx heads, the final head, body octets, trailers, the end, and the reset that ended it. */
export interface UserStream {
  interim: string[][];
  head: string[] | undefined;
  body: Buffer[];
  trailers: string[] | undefined;
  ended: boolean;
  reset: number | undefined;
}

/** What the user of one connection got, by stream id; `frozen` once the case is read (the teardown after it is not the case's). */
export interface UserRecord {
  readonly streams: Map<number, UserStream>;
  goaway: number | undefined;
  /** The user heard the connection close, and whether with an error. */
  closed: "clean" | "error" | undefined;
  readonly faults: string[];
  frozen: boolean;
}

export interface RunningClient {
  readonly record: UserRecord;
  /** Settles when the user has heard the connection close (or at once, if it has). */
  readonly closed: Promise<void>;
  destroy(): void;
}

/** The connection window the h2c pool gives the app (SESSION_WINDOW); both clients take it. */
export const CONNECTION_WINDOW = 4 * 1024 * 1024;
/** The header list both clients accept, the codec's default: nghttp2's own is raised or lowered to it. */
const MAX_HEADER_LIST_SIZE = 16 * 1024;

function newRecord(requests: number): UserRecord {
  const streams = new Map<number, UserStream>();
  for (let i = 0; i < requests; i++) streams.set(2 * i + 1, { interim: [], head: undefined, body: [], trailers: undefined, ended: false, reset: undefined });
  return { streams, goaway: undefined, closed: undefined, faults: [], frozen: false };
}

function requestFields(method: Method, port: number): string[] {
  return [":method", method, ":scheme", "http", ":path", "/", ":authority", `127.0.0.1:${port}`];
}

/** The codec's client side on a net socket, its requests sent at once (as the gRPC probe does; the pool waits for SETTINGS first). */
export function startCodecClient(port: number, methods: readonly Method[]): RunningClient {
  const record = newRecord(methods.length);
  const socket = net.connect({ host: "127.0.0.1", port, noDelay: true });
  let heardClose!: () => void;
  const closed = new Promise<void>((resolve) => (heardClose = resolve));
  const of = (stream: { id: number }): UserStream | undefined => (record.frozen ? undefined : record.streams.get(stream.id));
  const handler: H2ConnectionHandler = {
    onHead(stream, fields, _neverIndexed, endStream) {
      const seen = of(stream);
      if (seen === undefined) return;
      if ((fields[1] ?? "").startsWith("1")) seen.interim.push([...fields]);
      else seen.head = [...fields];
      seen.ended ||= endStream;
    },
    onOversizedHead() {},
    onData(stream, source, start, end, endStream) {
      const data = source.subarray(start, end);
      connection.consume(stream, data.length);
      const seen = of(stream);
      if (seen === undefined) return;
      seen.body.push(Buffer.from(data));
      seen.ended ||= endStream;
    },
    onTrailers(stream, fields) {
      const seen = of(stream);
      if (seen === undefined) return;
      seen.trailers = [...fields];
      seen.ended = true;
    },
    onReset(stream, errorCode) {
      const seen = of(stream);
      if (seen !== undefined) seen.reset ??= errorCode;
    },
    onStreamEnd() {},
    onWritable() {},
    onGoaway(_lastStreamId, errorCode) {
      if (!record.frozen) record.goaway ??= errorCode;
    },
    onClose(error) {
      if (!record.frozen) record.closed = error === undefined ? "clean" : "error";
      heardClose();
    },
    onFault(error) {
      // A fault is ours, never the app's: the differential fails on it.
      record.faults.push(String(error));
    },
  };
  const connection = connectionOnSocket(socket, handler, { role: "client", clock: () => performance.now(), connectionWindow: CONNECTION_WINDOW }, () => {});
  for (const method of methods) connection.request(requestFields(method, port), true, undefined);
  socket.on("close", () => heardClose());
  return {
    record,
    closed,
    destroy: () => {
      record.frozen = true;
      connection.destroy();
      socket.destroy();
    },
  };
}

/** node:http2's client (nghttp2) with the same limits and window, its requests sent at once. */
export function startNodeClient(port: number, methods: readonly Method[]): RunningClient {
  const record = newRecord(methods.length);
  // node's own cap of 128 fields (maxHeaderListPairs) is raised: the oracle is nghttp2's rules, the codec's cap is the 16 KiB list.
  const session = http2.connect(`http://127.0.0.1:${port}`, { settings: { enablePush: false, maxHeaderListSize: MAX_HEADER_LIST_SIZE }, maxHeaderListPairs: 4096 });
  const closed = new Promise<void>((resolve) => session.once("close", () => resolve()));
  session.on("error", () => {
    if (!record.frozen) record.closed = "error";
  });
  session.on("close", () => {
    if (!record.frozen) record.closed ??= "clean";
  });
  session.on("goaway", (errorCode: number) => {
    if (!record.frozen) record.goaway ??= errorCode;
  });
  session.on("connect", () => session.setLocalWindowSize(CONNECTION_WINDOW));
  methods.forEach((method, i) => {
    const seen = record.streams.get(2 * i + 1)!;
    const stream = session.request({ ":method": method, ":path": "/" }, { endStream: true });
    const live = (): boolean => !record.frozen;
    stream.on("error", () => {});
    stream.on("headers", (_headers: unknown, _flags: number, raw: string[]) => live() && seen.interim.push([...raw]));
    stream.on("response", (_headers: unknown, flags: number, raw: string[]) => {
      if (!live()) return;
      seen.head = [...raw];
      seen.ended ||= (flags & FLAG.END_STREAM) !== 0;
    });
    stream.on("data", (chunk: Buffer) => live() && seen.body.push(chunk));
    stream.on("trailers", (_headers: unknown, _flags: number, raw: string[]) => {
      if (!live()) return;
      seen.trailers = [...raw];
      seen.ended = true;
    });
    // node ends the readable side of a stream that was reset too: only an end without a reset code is the app's END_STREAM.
    stream.on("end", () => live() && (stream.rstCode ?? 0) === 0 && (seen.ended = true));
    stream.on("close", () => {
      if (live() && stream.rstCode !== undefined && stream.rstCode !== 0) seen.reset ??= stream.rstCode;
    });
  });
  return {
    record,
    closed,
    destroy: () => {
      record.frozen = true;
      session.destroy();
    },
  };
}

/**
 * One client against the app's next connection: the app writes `pieces` once the requests are in;
 * after the wire answer (and, if the connection ended, the user's hearing of the close, within
 * `boundMs`) the record is frozen and the connection dropped.
 */
export async function runClient(app: ScriptedApp, pieces: readonly Buffer[], methods: readonly Method[], start: typeof startCodecClient, boundMs: number): Promise<ClientOutcome> {
  const answered = app.expect(pieces, methods.length, boundMs);
  const client = start(app.port, methods);
  const wire = await answered;
  if (wire.end !== "ack") {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([client.closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, boundMs)))]);
    clearTimeout(timer);
  }
  client.destroy();
  app.dropConnections();
  return { wire, user: client.record };
}
