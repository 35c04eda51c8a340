// The start's warm-up only watches readiness: it never starts a check, so no /readyz shares one begun before the app listened.
import t from "tap";
import type { TableReader } from "../../src/procfs/listener-scan.js";
import { send } from "../helpers/http-client.js";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { ManualTimers } from "../helpers/test-doubles.js";

const HEADER = "  sl  local_address rem_address   st\n";
const LISTENING_15008 = "   0: 0100007F:3AA0 00000000:0000 0A\n";

/** The daemon's clock, 500 ms on at each read: the warm-up's 5 s bound runs out after a few of its rounds (the warm-up reads it once a round, as does each readiness answer it looks at), not after 4,000 real exchanges of each protocol. */
class SteppingClock extends ManualTimers {
  override now(): number {
    return (this.time += 500);
  }
}

t.test("a warm-up that runs to its end with nobody asking reads the tables once (the start's check), and /readyz then scans afresh", async (t) => {
  let reads = 0;
  let listening = false;
  const readTable: TableReader = async (_path, onChunk) => {
    reads++;
    onChunk(Buffer.from(HEADER + (listening ? LISTENING_15008 : "")));
  };
  const daemon = await startTestDaemon(t, ["--readiness-required-listener", "15008", "--readiness-cache-ttl", "0s"], readTable, { warmUpBeforeReady: true, timers: new SteppingClock(1000) });
  const outcome = await daemon.warmUp;
  t.match(outcome, { stoppedBy: /^(done|time)$/ }, "nobody said ready");
  t.ok(outcome!.http1 > 0 && outcome!.grpc > 0, `it ran: ${JSON.stringify(outcome)}`);
  t.equal(reads, 2, "tcp and tcp6 once, at start: the warm-up asked for no scan of its own");
  listening = true;
  t.equal((await send(daemon.port, "/readyz")).status, 200, "the first /readyz after the app listens scans and is ready");
});

t.test("the warm-up stops once a prober's answer says ready", async (t) => {
  let listening = false;
  const readTable: TableReader = async (_path, onChunk) => {
    onChunk(Buffer.from(HEADER + (listening ? LISTENING_15008 : "")));
  };
  const daemon = await startTestDaemon(t, ["--readiness-required-listener", "15008", "--readiness-cache-ttl", "0s"], readTable, { warmUpBeforeReady: true });
  listening = true;
  let status = 0;
  for (let asked = 0; asked < 10 && status !== 200; asked++) status = (await send(daemon.port, "/readyz")).status;
  t.equal(status, 200);
  t.match(await daemon.warmUp, { stoppedBy: /^(ready|done)$/ });
});
