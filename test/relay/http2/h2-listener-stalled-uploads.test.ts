// Issue 52's "one reader never stalls another" on our own listener, against the built binary: one h2 client's uploads held in the --max-concurrency queue never hold that client's connection window from its other streams.
import { existsSync } from "node:fs";
import type { ClientHttp2Stream } from "node:http2";
import t from "tap";
import { h2Connect, h2Request, startH2Upstream, type H2Answer } from "../../helpers/h2.js";
import { BINARY, spawnDaemon } from "../../helpers/spawn-daemon.js";

const skip = existsSync(BINARY) ? false : "the binary is not built (make build)";
/** 24 × 64 KiB is 1.5 MiB: past the 1 MiB connection window our listener gives a client. */
const QUEUED_STREAMS = 24;
const WINDOW_FULL = Buffer.alloc(64 * 1024, 0x75);
/** A gRPC health Check for the server as a whole: a 5-octet frame of an empty message. */
const CHECK = Buffer.alloc(5);
/** Long past any loaded machine's few octets over loopback: on the unfixed proxy the answer never came at all. */
const STALL_MS = 20_000;

function answerOrStall(answer: Promise<H2Answer>): Promise<H2Answer | "stalled"> {
  let timer: NodeJS.Timeout | undefined;
  const stall = new Promise<"stalled">((resolve) => (timer = setTimeout(() => resolve("stalled"), STALL_MS)));
  return Promise.race([answer, stall]).finally(() => clearTimeout(timer));
}

t.test(`${QUEUED_STREAMS} uploads queued behind --max-concurrency never stall another stream of the same h2 client`, { skip }, async (t) => {
  const app = await startH2Upstream(t);
  // The app takes the one slot and never answers: every other upload waits in the queue, its body held by us.
  let slotTaken!: () => void;
  const slotReached = new Promise<void>((resolve) => (slotTaken = resolve));
  app.handle(() => slotTaken());
  const daemon = await spawnDaemon(t, [BINARY], ["--upstream", app.url, "--upstream-protocol", "h2c", "--max-concurrency", "1", "--queue-timeout", "60s"]);
  const client = h2Connect(t, daemon.port);
  const slot = client.request({ ":method": "POST", ":path": "/slot" });
  slot.on("error", () => {});
  await slotReached;
  const queued: ClientHttp2Stream[] = [];
  for (let index = 0; index < QUEUED_STREAMS; index++) {
    const stream = client.request({ ":method": "POST", ":path": "/upload" });
    stream.on("error", () => {});
    // A stream window's worth, never ended: queued in order before the next stream's body.
    stream.write(WINDOW_FULL);
    queued.push(stream);
  }
  const answer = await answerOrStall(
    h2Request(client, { ":method": "POST", ":path": "/grpc.health.v1.Health/Check", "content-type": "application/grpc", te: "trailers" }, CHECK),
  );
  t.not(answer, "stalled", "the health check's body is not held behind the queued uploads");
  if (answer === "stalled") return;
  t.equal(answer.status, 200, "200");
  // On the unfixed proxy the check's body never came, and the body read's deadline answered 4 (DEADLINE_EXCEEDED).
  t.equal(answer.trailers?.["grpc-status"], "0", "grpc-status 0: the check's body came at once, and it was answered");
  t.equal(app.opened, 1, "the queued uploads are still queued");
  t.ok(queued.every((stream) => !stream.closed), "the queued uploads are still open, each held to its own window");
  t.equal(daemon.child.exitCode, null, "the process is running");
});
