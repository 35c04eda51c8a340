// /readyz?wait=<duration>: held while not ready, answered when the checks pass; one re-run per 50 ms for 1,000 waiters; draining at once; the binary after a real listen.
import t from "tap";
import type { TableReader } from "../../src/procfs/listener-scan.js";
import { send } from "../helpers/http-client.js";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { holdPort } from "../helpers/port-holder.js";
import { BINARY, spawnDaemon } from "../helpers/spawn-daemon.js";

const HEADER = "  sl  local_address rem_address   st\n";
const LISTEN_15008 = "   0: 0100007F:3AA0 00000000:0000 0A\n";

/** A tcp table that shows 15008 listening once `listenAfter` reads of `tcp` have been made; counts them. */
function scriptedTable(listenAfter: number) {
  const state = { reads: 0, listenAfter, onRead: () => {} };
  const readTable: TableReader = async (path, onChunk) => {
    if (path.endsWith("/tcp")) {
      state.reads++;
      state.onRead();
    }
    onChunk(Buffer.from(HEADER + (path.endsWith("/tcp") && state.reads > state.listenAfter ? LISTEN_15008 : "")));
  };
  return { state, readTable };
}

t.test("1,000 held requests share one table read per 50 ms and are answered 200 once the port listens", async (t) => {
  const { state, readTable } = scriptedTable(Number.POSITIVE_INFINITY);
  // TTL 1h: without waiters nothing would read the table again; every read below is a waiters' re-run.
  const daemon = await startTestDaemon(t, ["--readiness-required-listener", "15008", "--readiness-cache-ttl", "1h"], readTable);
  t.equal((await send(daemon.port, "/readyz")).status, 503);
  const readsBefore = state.reads;
  state.listenAfter = readsBefore + 6; // the sixth re-run sees the listener
  const started = performance.now();
  const replies = await Promise.all(Array.from({ length: 1000 }, () => send(daemon.port, "/readyz?wait=20s")));
  const elapsedMs = performance.now() - started;
  t.same(new Set(replies.map((reply) => reply.text())), new Set(['{"status":"ready"}']), "every one answered 200 by the listen, none by the 20 s");
  const reruns = state.reads - readsBefore;
  t.ok(reruns >= 6, `${reruns} re-runs`);
  t.ok(reruns <= Math.floor(elapsedMs / 50) + 1, `at most one read per 50 ms: ${reruns} reads in ${elapsedMs.toFixed(0)} ms`);
  const after = state.reads;
  await send(daemon.port, "/readyz");
  t.equal(state.reads, after, "with nobody waiting, the TTL rules again: no read");
});

t.test("?wait: a ready answer, a bad value, draining", async (t) => {
  const { state, readTable } = scriptedTable(Number.POSITIVE_INFINITY);
  const daemon = await startTestDaemon(t, ["--readiness-required-listener", "15008", "--readiness-cache-ttl", "1h", "--shutdown-delay", "2s"], readTable);
  for (const bad of ["31s", "1", "soon", ""]) {
    const reply = await send(daemon.port, `/readyz?wait=${bad}`);
    t.equal(reply.status, 400, `wait=${bad}`);
    t.match(reply.json(), { error: /at most 30s/ });
  }
  const zero = await send(daemon.port, "/readyz?wait=0s&verbose");
  t.equal(zero.status, 503, "wait=0s is no wait");
  t.match(zero.text(), /\[-\]listener-15008 failed: not listening/);
  // One held request; the drain answers it at once with the draining 503.
  const firstRerun = new Promise<void>((resolve) => (state.onRead = resolve));
  const held = send(daemon.port, "/readyz?wait=20s");
  await firstRerun;
  void daemon.shutdown.run("SIGTERM");
  const drained = await held;
  t.equal(drained.status, 503);
  t.match(drained.json(), { draining: true });
  const during = await send(daemon.port, "/readyz?wait=20s");
  t.match(during.json(), { status: "not ready", draining: true }, "during the drain a new one is not held");
});

t.test("the binary: a held probe is answered 200 once the app listens", async (t) => {
  const holder = await holdPort(t);
  // TTL 1h: the 503 cached at start would stand for an hour; only the held request's re-runs can see the listen.
  const daemon = await spawnDaemon(t, [BINARY], ["--readiness-required-listener", String(holder.port), "--readiness-cache-ttl", "1h"]);
  t.equal((await send(daemon.port, "/readyz")).status, 503);
  const held = send(daemon.port, "/readyz?wait=20s");
  await holder.listen();
  const reply = await held;
  t.equal(reply.status, 200);
  t.equal(reply.text(), '{"status":"ready"}');
});
