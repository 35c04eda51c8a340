// Memory follows octets, never requests within a read (issue 52): one 64 KiB read of tiny pipelined GETs to an app that holds the first is held as its octets, not as ~770 bytes of heap per request of 27 octets.
import { connect, type Socket } from "node:net";
import t from "tap";
import { startGatedUpstream } from "../helpers/gated-upstream.js";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { heldAfterGc } from "../helpers/held-memory.js";

const CONNECTIONS = 16;
const REQUEST = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
/** As many as one 64 KiB read holds: 2,427. */
const PER_READ = Math.floor(65_536 / REQUEST.length);
/**
 * What the requests' octets could cost held as bytes (twice them) and 4 MiB of the heap's noise.
 * Today each parsed request waits as its own transaction: ~28 MiB for these 16 reads.
 */
const BOUND = 2 * CONNECTIONS * PER_READ * REQUEST.length + 4 * 1024 * 1024;

t.test("one read of tiny pipelined GETs per connection, the first held by the app: held by octets (issue 52)", async (t) => {
  const app = await startGatedUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", app.url]);
  const sockets: Socket[] = [];
  for (let index = 0; index < CONNECTIONS; index++) {
    const socket = connect(daemon.port, "127.0.0.1");
    t.teardown(() => socket.destroy());
    socket.on("data", () => {});
    await new Promise((resolve) => socket.once("connect", resolve));
    sockets.push(socket);
  }
  const before = heldAfterGc();
  for (const socket of sockets) socket.write(REQUEST.repeat(PER_READ));
  // Each connection's first request reaches the app only after its read was parsed (llhttp parses a read whole, in one call).
  await app.arrivals(CONNECTIONS);
  const growth = heldAfterGc() - before;
  const requests = CONNECTIONS * PER_READ;
  t.comment(`${requests} pipelined GETs (${CONNECTIONS} reads of ${PER_READ}) waiting: the heap grew ${(growth / 1024 / 1024).toFixed(1)} MiB (${(growth / requests).toFixed(0)} bytes per request of ${REQUEST.length} octets)`);
  t.ok(growth < BOUND, `grew under ${(BOUND / 1024 / 1024).toFixed(1)} MiB`);
});
