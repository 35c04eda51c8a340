// A one-connection latency client: one keep-alive connection per target, GETs sent to the targets in turn with one request in flight in all, so the shared machine's stalls fall on every target alike.
import { connect } from "node:net";

const HEAD_END = Buffer.from("\r\n\r\n");
const LAST_CHUNK = Buffer.from("\r\n0\r\n\r\n");
const TIMEOUT_MS = 5_000;
// hrtime at performance's time origin, so a send's hrtime becomes an epoch time comparable with another process's GC entries.
const originNs = process.hrtime.bigint() - BigInt(Math.round(performance.now() * 1e6));

/** Bytes of the first whole response in `buffer`, or -1 while it is incomplete. Knows Content-Length and chunked bodies. */
function responseLength(buffer) {
  const headEnd = buffer.indexOf(HEAD_END);
  if (headEnd < 0) return -1;
  const head = buffer.toString("latin1", 0, headEnd).toLowerCase();
  const length = /\r\ncontent-length: *(\d+)/.exec(head);
  if (length) {
    const total = headEnd + 4 + Number(length[1]);
    return buffer.length >= total ? total : -1;
  }
  if (!/\r\ntransfer-encoding: *chunked/.test(head)) throw new Error(`response with neither content-length nor chunked: ${head.split("\r\n")[0]}`);
  // From the head's last CRLF on, so an empty body's lone "0\r\n\r\n" is found too.
  const end = buffer.indexOf(LAST_CHUNK, headEnd + 2);
  return end < 0 ? -1 : end + LAST_CHUNK.length;
}

/** One keep-alive connection to 127.0.0.1:`port`; reopened (outside the timing) if the server closed it. */
class Connection {
  constructor(port, path) {
    this.port = port;
    this.request = Buffer.from(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    this.socket = undefined;
  }

  async open() {
    if (this.socket && !this.socket.destroyed && !this.socket.readableEnded) return;
    this.socket?.destroy();
    this.socket = await new Promise((resolve, reject) => {
      const socket = connect({ port: this.port, host: "127.0.0.1", noDelay: true }, () => resolve(socket));
      socket.once("error", reject);
    });
    this.socket.on("error", () => {}); // surfaces as a failed request below
  }

  /** Sends one GET; resolves to `{ ms, ok, sentAt }` once the whole response is in (sentAt: epoch ms, the clock of performance.timeOrigin). */
  async get() {
    await this.open();
    const socket = this.socket;
    return new Promise((resolve, reject) => {
      let received = Buffer.alloc(0);
      const done = (error, result) => {
        clearTimeout(timer);
        socket.off("data", onData);
        socket.off("close", onClose);
        if (error) reject(error);
        else resolve(result);
      };
      const onData = (chunk) => {
        received = received.length ? Buffer.concat([received, chunk]) : chunk;
        let length;
        try {
          length = responseLength(received);
        } catch (error) {
          return done(error);
        }
        if (length < 0) return;
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        done(undefined, { ms, ok: received.subarray(9, 12).toString() === "200", sentAt: performance.timeOrigin + Number(started - originNs) / 1e6 });
      };
      const onClose = () => done(new Error(`127.0.0.1:${this.port} closed the connection mid-response`));
      const timer = setTimeout(() => done(new Error(`127.0.0.1:${this.port}: no whole response within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
      socket.on("data", onData);
      socket.once("close", onClose);
      const started = process.hrtime.bigint();
      socket.write(this.request);
    });
  }

  close() {
    this.socket?.destroy();
  }
}

/**
 * For `seconds` (and at most `maxPerTarget` requests each), one GET `path` to each target in turn,
 * in a new random order each pass. Not a rotation of one fixed order: there each target always
 * followed the same neighbour, and two identical binaries came out at 544 and 837 µs p99 by
 * their place alone (on 2 shared cores). Resolves to a Map of target name to
 * `{ ms: number[], errors }` (errors: answers other than 200); with `stamps`, also `sentAt: number[]`
 * (epoch ms of each send, for lining requests up with another process's events).
 */
export async function interleavedLatency(targets, { path, seconds, maxPerTarget = 200_000, stamps = false }) {
  const connections = targets.map((target) => new Connection(target.port, path));
  const samples = targets.map(() => (stamps ? { ms: [], errors: 0, sentAt: [] } : { ms: [], errors: 0 }));
  const deadline = performance.now() + seconds * 1000;
  try {
    const order = targets.map((_target, index) => index);
    for (let pass = 0; pass < maxPerTarget && performance.now() < deadline; pass++) {
      shuffle(order);
      for (const index of order) {
        const { ms, ok, sentAt } = await connections[index].get();
        samples[index].ms.push(ms);
        samples[index].sentAt?.push(sentAt);
        if (!ok) samples[index].errors++;
      }
    }
  } finally {
    for (const connection of connections) connection.close();
  }
  return new Map(targets.map((target, index) => [target.name, samples[index]]));
}

/** Fisher-Yates, in place. */
function shuffle(values) {
  for (let at = values.length - 1; at > 0; at--) {
    const other = Math.floor(Math.random() * (at + 1));
    [values[at], values[other]] = [values[other], values[at]];
  }
}

/** The `q` quantile (0..1) of `values`: the smallest value with at least q of them at or below it. */
export function quantile(values, q) {
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)];
}
