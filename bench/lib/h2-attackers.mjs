// Issue 52's hostile h2 clients for the soak, on raw sockets: one that reads nothing on 90 GET /big streams, and 1-octet DATA frames to a proxied path and to the gRPC health Check; beside them an honest client whose 1 MiB GETs must all be answered.
import http2 from "node:http2";
import { connect } from "node:net";

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
const FRAME = { DATA: 0, HEADERS: 1, RST_STREAM: 3, SETTINGS: 4, PING: 6, GOAWAY: 7, WINDOW_UPDATE: 8 };
const END_STREAM = 0x1;
const END_HEADERS = 0x4;
const ACK = 0x1;
const INITIAL_WINDOW_SIZE = 0x4;
/**
 * A victim's GET that goes this long without an octet counts as stalled (issue 52.3's victim got
 * its head and then nothing for as long as the attacker stayed). Progress, not the whole GET's
 * time: under the phase's saturating load a 1 MiB GET gets its fair share beside 100 downloads in
 * flight (their own mean 2.8 s, max 7.4 s in a run), and one took 10.2 s while still moving.
 */
const VICTIM_STALL_MS = 10_000;

function frame(type, flags, streamId, payload = Buffer.alloc(0)) {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(streamId, 5);
  return Buffer.concat([head, payload]);
}

/** A header block of literal fields without indexing (names and values under 127 octets, no Huffman). */
function headerBlock(fields) {
  const parts = [];
  for (const [name, value] of fields) parts.push(Buffer.from([0, name.length]), Buffer.from(name), Buffer.from([value.length]), Buffer.from(value));
  return Buffer.concat(parts);
}

/** A raw h2 connection: `send`, the windows the proxy gives us, and the frames it sends counted; `onFrame` hears each. */
function rawConnection(port, settings, onFrame) {
  const socket = connect({ host: "127.0.0.1", port });
  const state = { connectionWindow: 65535, initialWindow: 65535, streamWindows: new Map(), frames: 0, resets: 0, goaway: undefined, closed: false, socket };
  let pending = Buffer.alloc(0);
  socket.on("error", () => {});
  socket.on("close", () => (state.closed = true));
  socket.on("data", (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 9) {
      const length = pending.readUIntBE(0, 3);
      if (pending.length < 9 + length) break;
      const type = pending[3];
      const flags = pending[4];
      const streamId = pending.readUInt32BE(5) & 0x7fffffff;
      const payload = pending.subarray(9, 9 + length);
      pending = pending.subarray(9 + length);
      state.frames++;
      if (type === FRAME.SETTINGS && !(flags & ACK)) {
        for (let at = 0; at + 6 <= payload.length; at += 6) if (payload.readUInt16BE(at) === INITIAL_WINDOW_SIZE) state.initialWindow = payload.readUInt32BE(at + 2);
        socket.write(frame(FRAME.SETTINGS, ACK, 0));
      } else if (type === FRAME.WINDOW_UPDATE) {
        const increment = payload.readUInt32BE(0) & 0x7fffffff;
        if (streamId === 0) state.connectionWindow += increment;
        else if (state.streamWindows.has(streamId)) state.streamWindows.set(streamId, state.streamWindows.get(streamId) + increment);
      } else if (type === FRAME.RST_STREAM) state.resets++;
      else if (type === FRAME.GOAWAY) state.goaway = payload.readUInt32BE(4);
      onFrame(state, type, flags, streamId);
    }
  });
  const settingsPayload = Buffer.concat(settings.map(([id, value]) => Buffer.from([id >> 8, id & 0xff, value >>> 24, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff])));
  socket.write(Buffer.concat([PREFACE, frame(FRAME.SETTINGS, 0, 0, settingsPayload)]));
  return state;
}

/**
 * 90 GET /big streams on a connection with SETTINGS_INITIAL_WINDOW_SIZE 0, held unread until
 * `signal` (every DATA the proxy could send stays with it). Resolves to a note: still connected?
 */
export function stalledReader(port, signal, streams = 90) {
  return new Promise((resolve) => {
    const state = rawConnection(port, [[INITIAL_WINDOW_SIZE, 0]], () => {});
    for (let index = 0; index < streams; index++) {
      const fields = [[":method", "GET"], [":scheme", "http"], [":authority", "soak"], [":path", "/big"]];
      state.socket.write(frame(FRAME.HEADERS, END_HEADERS | END_STREAM, 1 + 2 * index, headerBlock(fields)));
    }
    const done = () => {
      const note = `${streams} streams unread, ${state.closed ? "connection closed by the proxy" : "still connected"}, ${state.resets} resets`;
      state.socket.destroy();
      resolve({ requests: streams, note, stillConnected: !state.closed });
    };
    if (signal.aborted) done();
    else signal.addEventListener("abort", done, { once: true });
  });
}

/**
 * Connection after connection of `streams` streams to `path`, each sending `octetsPerStream` DATA
 * frames of one octet as the windows given back allow, then END_STREAM; until `signal`.
 */
export async function oneOctetFrames(port, { path, contentType, signal, streams = 100, octetsPerStream = 65_536 }) {
  let answered = 0;
  let connections = 0;
  let resets = 0;
  const octet = Buffer.from([0]);
  while (!signal.aborted) {
    connections++;
    await new Promise((resolve) => {
      const sent = new Map();
      const pump = (state) => {
        const frames = [];
        for (const [streamId, count] of sent) {
          let window = state.streamWindows.get(streamId);
          while (count < octetsPerStream && window > 0 && state.connectionWindow > 0 && frames.length < 4096) {
            frames.push(frame(FRAME.DATA, sent.get(streamId) + 1 === octetsPerStream ? END_STREAM : 0, streamId, octet));
            sent.set(streamId, sent.get(streamId) + 1);
            window--;
            state.connectionWindow--;
            if (sent.get(streamId) >= octetsPerStream) break;
          }
          state.streamWindows.set(streamId, window);
        }
        if (frames.length > 0) state.socket.write(Buffer.concat(frames), () => pump(state));
      };
      const state = rawConnection(port, [], (state, type, flags) => {
        if ((type === FRAME.HEADERS || type === FRAME.DATA) && flags & END_STREAM) answered++;
        if (type === FRAME.WINDOW_UPDATE || (type === FRAME.SETTINGS && !(flags & ACK))) pump(state);
      });
      for (let index = 0; index < streams; index++) {
        const streamId = 1 + 2 * index;
        const fields = [[":method", "POST"], [":scheme", "http"], [":authority", "soak"], [":path", path], ["content-type", contentType], ["te", "trailers"]];
        state.socket.write(frame(FRAME.HEADERS, END_HEADERS, streamId, headerBlock(fields)));
        state.streamWindows.set(streamId, state.initialWindow);
        sent.set(streamId, 0);
      }
      pump(state);
      // One connection for at most 10 s (or until the proxy ends it), then a fresh one, as in the issue.
      const timer = setTimeout(finish, 10_000);
      signal.addEventListener("abort", finish, { once: true });
      state.socket.on("close", finish);
      function finish() {
        clearTimeout(timer);
        signal.removeEventListener("abort", finish);
        resets += state.resets;
        state.socket.destroy();
        resolve();
      }
    });
  }
  return { requests: answered, note: `${connections} connections, ${answered} streams answered, ${resets} resets` };
}

/** GET /big again and again on one honest connection until `signal`; each must come whole, never 10 s without an octet (a stalled one is an error). */
export async function honestVictim(port, signal, bytes) {
  const session = http2.connect(`http://127.0.0.1:${port}`);
  session.on("error", () => {});
  let requests = 0;
  let errors = 0;
  let firstError;
  let slowestMs = 0;
  while (!signal.aborted && !session.destroyed) {
    const started = performance.now();
    const outcome = await new Promise((resolve) => {
      const stream = session.request({ ":path": "/big" });
      let received = 0;
      let status = 0;
      let timer;
      const arm = () => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          resolve(`stalled: no octet for ${VICTIM_STALL_MS / 1000} s after ${received} octets`);
          stream.close(http2.constants.NGHTTP2_CANCEL);
        }, VICTIM_STALL_MS);
      };
      arm();
      stream.on("response", (headers) => (status = Number(headers[":status"])));
      stream.on("data", (chunk) => {
        received += chunk.length;
        arm();
      });
      stream.on("error", () => {});
      stream.on("close", () => {
        clearTimeout(timer);
        resolve(status === 200 && received === bytes ? "ok" : `status ${status}, ${received} octets`);
      });
    });
    requests++;
    slowestMs = Math.max(slowestMs, performance.now() - started);
    if (outcome !== "ok") {
      errors++;
      firstError ??= outcome;
    }
  }
  session.destroy();
  return { requests, errors, slowestMs, note: firstError };
}
