// 1,000 concurrent gRPC health Checks and 1,000 Watches through the daemon's real listener (node:http2 clients): every call answered, and the socket tables read once per TTL, however many callers.
import http2, { type ClientHttp2Session } from "node:http2";
import t from "tap";
import { decodeHealthCheckResponse, encodeHealthCheckRequest, SERVING_STATUS } from "../../src/grpc/health-messages.js";
import { frameMessage, isFramingError, unframeUnary } from "../../src/grpc/message-framing.js";
import { createFileTableReader, type TableReader } from "../../src/procfs/listener-scan.js";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { closedPort } from "../helpers/test-doubles.js";

const SESSIONS = 20;
/** Per session: 50 Watches held open and 50 Checks, under the listener's 100 streams per connection. */
const PER_SESSION = 50;
const TTL_MS = 200;
const WATCH_FOR_MS = 1_200;

/** Counts scans: one read of net/tcp per scan (tcp6 follows it in the same scan). */
function countingReader(): { reader: TableReader; scans: () => number } {
  const real = createFileTableReader();
  let scans = 0;
  return {
    reader: (path, onChunk) => {
      if (path.endsWith("/net/tcp")) scans++;
      return real(path, onChunk);
    },
    scans: () => scans,
  };
}

const body = frameMessage(encodeHealthCheckRequest(""));

function statusOf(chunk: Buffer): number {
  const message = unframeUnary(chunk);
  if (isFramingError(message)) throw new Error(`not one message: ${message.message}`);
  return decodeHealthCheckResponse(message);
}

/** One Check: resolves with its status and grpc-status. */
function check(session: ClientHttp2Session): Promise<{ status: number; grpcStatus: string | undefined }> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ":method": "POST", ":path": "/grpc.health.v1.Health/Check", "content-type": "application/grpc", te: "trailers" });
    const chunks: Buffer[] = [];
    let grpcStatus: string | undefined;
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("trailers", (trailers) => (grpcStatus = String(trailers["grpc-status"])));
    stream.on("error", reject);
    stream.on("close", () => resolve({ status: statusOf(Buffer.concat(chunks)), grpcStatus }));
    stream.end(body);
  });
}

/** One Watch: resolves with its first status; the stream stays open until the session closes. */
function watch(session: ClientHttp2Session, statuses: number[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ":method": "POST", ":path": "/grpc.health.v1.Health/Watch", "content-type": "application/grpc", te: "trailers" });
    stream.on("data", (chunk: Buffer) => {
      // Each status is one 7-byte frame (or 5 for UNKNOWN); DATA may carry several.
      for (let offset = 0; offset < chunk.length; ) {
        const length = 5 + chunk.readUInt32BE(offset + 1);
        statuses.push(statusOf(chunk.subarray(offset, offset + length)));
        offset += length;
      }
      resolve(statuses[0]!);
    });
    stream.on("error", reject);
    stream.end(body);
  });
}

t.test(`${SESSIONS * PER_SESSION} Checks and ${SESSIONS * PER_SESSION} Watches at once: all answered, one scan per TTL`, async (t) => {
  const counting = countingReader();
  const daemon = await startTestDaemon(t, ["--upstream", `http://127.0.0.1:${await closedPort()}`, "--readiness-required-listener", String(await closedPort()), "--readiness-cache-ttl", `${TTL_MS}ms`], counting.reader);
  const sessions = Array.from({ length: SESSIONS }, () => http2.connect(`http://127.0.0.1:${daemon.port}`));
  t.teardown(() => {
    for (const session of sessions) session.destroy();
  });
  const scansBefore = counting.scans();
  const started = performance.now();
  const watchStatuses = sessions.flatMap(() => Array.from({ length: PER_SESSION }, () => [] as number[]));
  const watches = sessions.flatMap((session, index) => watchStatuses.slice(index * PER_SESSION, (index + 1) * PER_SESSION).map((statuses) => watch(session, statuses)));
  const checks = sessions.flatMap((session) => Array.from({ length: PER_SESSION }, () => check(session)));
  const checked = await Promise.all(checks);
  const firstWatched = await Promise.all(watches);
  t.ok(checked.every((answer) => answer.status === SERVING_STATUS.NOT_SERVING && answer.grpcStatus === "0"), `${checked.length} Checks: NOT_SERVING, grpc-status 0`);
  t.ok(firstWatched.every((status) => status === SERVING_STATUS.NOT_SERVING), `${firstWatched.length} Watches: NOT_SERVING at once`);
  // Hold the watchers open for a few TTLs: the shared poll runs, once per TTL, for all of them.
  const holdStart = counting.scans();
  await new Promise((resolve) => setTimeout(resolve, WATCH_FOR_MS));
  const held = counting.scans() - holdStart;
  // At most one per TTL is the property; fewer is a loaded machine's slower timers, and still one poll.
  t.ok(held >= 1 && held <= WATCH_FOR_MS / TTL_MS + 1, `${held} scans while ${firstWatched.length} watchers waited ${WATCH_FOR_MS} ms: the one poll, once per TTL`);
  const elapsed = performance.now() - started;
  const scans = counting.scans() - scansBefore;
  const most = Math.ceil(elapsed / TTL_MS) + 1;
  t.ok(scans >= 1 && scans <= most, `${scans} scans in ${elapsed.toFixed(0)} ms at a ${TTL_MS} ms TTL for ${checked.length + firstWatched.length} calls (at most ${most})`);
  t.ok(watchStatuses.every((statuses) => statuses.length === 1), "no change: each watcher got its one status and nothing more");
  t.equal(daemon.server.sockets.servers.every((server) => server.listening), true);
});
