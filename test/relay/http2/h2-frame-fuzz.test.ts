// h2 client connections fuzzed through the downgrade to HTTP/1.1 (--upstream-protocol http1): H2_FUZZ_RUNS (default 1000, a tenth in `make test-unit`) in every test run, FUZZ_RUNS for `make fuzz`; replay a failure with H2_FUZZ_SEED and H2_FUZZ_PATH.
import fc from "fast-check";
import { setImmediate as nextTurn } from "node:timers/promises";
import t from "tap";
import { startTestDaemon, type TestDaemon } from "../../helpers/in-process-daemon.js";
import { startRecordingUpstream, type RecordingUpstream } from "../../helpers/recording-upstream.js";
import { takingUncaught } from "../../helpers/uncaught-capture.js";
import { exchange } from "../raw-exchange.js";
import { cuts, piecesOf } from "../request-fuzz.js";
import { buildConnection, connectionPlan, walkFrames, type BuiltConnection, type ConnectionPlan } from "./h2-fuzz-connection.js";
import { disagreements, showRequest } from "./h2-fuzz-check.js";
import { buildStream, streamParts } from "./h2-fuzz-streams.js";
import { FLAG, FRAME, PREFACE, frame, headerBlock, hpackInteger, settingsFrame } from "./h2-frames.js";
import { RawH2Client, type ClientView } from "./h2-raw-client.js";
import { readStrictRequests, type StrictReading } from "./strict-h1-requests.js";
import { fuzzSettings } from "../../helpers/fuzz-settings.js";

const { runs, seed, path } = fuzzSettings("H2_FUZZ", { fixedSeed: 20260425, defaultRuns: 1000 });
/**
 * node:http2 on node 24 (24.22, the binary's runtime, which runs the tests) ends the whole session
 * (GOAWAY INTERNAL_ERROR, "Protocol error") at a DATA frame past its stream's content-length,
 * where RFC 9113 §8.1.1 and CONTRACT §13 make it a stream error: the connection's other streams
 * are cut off with it. A runtime defect (README.md, Limits), counted; it goes with node:http2
 * (issue 38). (Node 20's nghttp2 binding made it a stream error, but never closed a session that
 * nghttp2 ended with a connection error: the tests ran there until the suite moved to the
 * shipped runtime, and such a session is now a finding like any connection left open.)
 */
const INTERNAL_ERROR = 2;
/** A bound on each wait for the proxy (its answers, the closing PING's ack): never reached when it behaves. */
const CASE_BOUND_MS = 5_000;

interface FuzzSetup {
  readonly daemon: TestDaemon;
  readonly upstream: RecordingUpstream;
  readonly uncaught: Error[];
  /** What the cases were, for the run's summary: shows the fuzz reaches past nghttp2. */
  readonly kinds: Map<string, number>;
  /** How often each hostile change was made (streams as generated). */
  readonly tweaks: Map<string, number>;
  /** Cases where a stream's DATA past its content-length ended the whole connection (see INTERNAL_ERROR). */
  overflowCuts: number;
  /** Cases the proxy ended with a connection error, each closed by it (checked in runCase). */
  connectionErrors: number;
  cases: number;
}

const count = (kinds: Map<string, number>, kind: string) => kinds.set(kind, (kinds.get(kind) ?? 0) + 1);

/** Streams the proxy owes a frame: ended by the client, or refused whatever the client does next. */
function owedAnswers(built: BuiltConnection): number[] {
  if (built.mutated) return [];
  return built.streams.filter((stream) => stream.ending === "ends" || (stream.fate === "never" && stream.ending === "open")).map((stream) => stream.id);
}

let barriers = 0;
/**
 * What the app read since the last call, one reading per upstream connection: taken after a
 * request through the proxy on a connection of its own has been answered (test/relay/upstream-
 * barrier.ts has the reasoning), its own bytes left out.
 */
async function collect(setup: FuzzSetup): Promise<StrictReading[]> {
  const barrier = `/__h2_barrier__/${++barriers}`;
  const result = await exchange(setup.daemon.port, { pieces: [Buffer.from(`GET ${barrier} HTTP/1.1\r\nHost: barrier\r\n\r\n`)], responses: 1, then: "half-close", timeoutMs: CASE_BOUND_MS });
  if (result.finals[0] !== 200) throw new Error(`the barrier request ${barrier} was not answered: the proxy stopped serving (${JSON.stringify(result.received.slice(0, 200))})`);
  const head = new RegExp(`GET ${barrier} HTTP/1\\.1\\r\\n[^]*?\\r\\n\\r\\n`);
  return setup.upstream
    .take()
    .bytes.map((text) => text.replace(head, ""))
    .filter((text) => text.length > 0)
    .map((text) => readStrictRequests(Buffer.from(text, "latin1")));
}

function describe(built: BuiltConnection, pieces: readonly Buffer[], client: ClientView, readings: readonly StrictReading[]): string {
  return [
    `bytes (base64): ${built.bytes.toString("base64")}`,
    `pieces: ${JSON.stringify(pieces.map((piece) => piece.length))}${built.mutated ? ", mutated" : ""}`,
    ...built.streams.map((stream) => `stream ${stream.id}: ${stream.fate} (${stream.why}), ending ${stream.ending}, trailers ${stream.trailers}, body ${JSON.stringify(stream.body.map((piece) => piece.toString("latin1")))}, fields ${JSON.stringify(stream.fields.map((field) => [field.name, field.value]))}`),
    `client got: ${JSON.stringify({ streams: Object.fromEntries([...client.streams].map(([id, answer]) => [id, { ...answer, data: Buffer.concat(answer.data).toString("latin1").slice(0, 100) }])), goaway: client.goaway, closed: client.closed })}`,
    `app got: ${readings.map((reading) => `[${reading.requests.map(showRequest).join(", ")}${reading.error === undefined ? "" : `, then ${reading.error}`}]`).join(" ")}`,
  ].join("\n");
}

/** One case: the connection written in pieces, its answers awaited, then what the app got, judged. */
async function runCase(setup: FuzzSetup, plan: ConnectionPlan, cutAt: readonly number[]): Promise<void> {
  const caseNo = ++setup.cases;
  const built = buildConnection(plan, caseNo);
  const walk = walkFrames(built.bytes);
  const ping = Buffer.alloc(8);
  ping.writeUInt32BE(caseNo);
  const pieces = piecesOf(built.bytes, cutAt);
  const errorsBefore = setup.upstream.parseErrors().length;
  const client = await RawH2Client.connect(setup.daemon.port);
  for (const piece of pieces) {
    await client.write(piece);
    await nextTurn();
  }
  // Ends every case: its ack says the proxy has read all before it (or the connection ended).
  // Not waited for: a proxy that stopped reading would hold a filler of megabytes.
  void client.write(Buffer.concat([walk.filler, frame(FRAME.PING, 0, 0, ping)]));
  const owed = owedAnswers(built);
  const settled = await client.until(
    (view) => view.closed || ((view.pingAcks.includes(ping.toString("hex")) || view.goaway !== undefined) && owed.every((id) => view.goaway !== undefined || view.streams.get(id)?.ended === true || view.streams.get(id)?.rstCode !== undefined)),
    CASE_BOUND_MS,
  );
  // A connection error (GOAWAY with a code) ends the connection: the proxy closes it, and with it
  // the streams' upstream connections (checked below). Node 20's node:http2 never did.
  const connectionError = client.goaway !== undefined && client.goaway.code !== 0;
  const closedAfterError = connectionError && (await client.until((view) => view.closed, CASE_BOUND_MS));
  if (connectionError) setup.connectionErrors++;
  client.destroy();
  const readings = await collect(setup);
  const overflowCut = !built.mutated && client.goaway?.code === INTERNAL_ERROR && built.streams.some((stream) => stream.overflows);
  if (overflowCut) setup.overflowCuts++;
  const problems = disagreements(built, walk, client, readings, overflowCut);
  if (connectionError && !closedAfterError) problems.push(`the proxy sent GOAWAY ${client.goaway?.code} but did not close the connection within ${CASE_BOUND_MS} ms`);
  if (!settled) problems.push(`within ${CASE_BOUND_MS} ms the proxy neither answered the closing PING and streams ${JSON.stringify(owed)} nor ended the connection`);
  const hanging = setup.upstream.cutHanging();
  if (hanging > 0) problems.push(`${hanging} upstream connections were left mid-request after the client had gone`);
  // llhttp (the app's parser) knows only its own list of methods, and takes PRI for the h2
  // preface: an h2 client may send any token (HTTP/1.1 allows it; the strict reader checks it).
  const unknownMethods = built.mutated || built.streams.some((stream) => stream.why.includes("llhttp"));
  const refused = setup.upstream.parseErrors().slice(errorsBefore).filter((code) => !(unknownMethods && (code === "HPE_INVALID_METHOD" || code === "HPE_INVALID_VERSION")));
  if (refused.length > 0) problems.push(`the app's own parser (node:http) refused what it got: ${refused.join(", ")}`);
  for (const error of setup.uncaught.splice(0)) problems.push(`uncaught exception: ${error.stack ?? error.message}`);
  // Taken, so that a long run holds no history.
  for (const record of setup.daemon.logs.records.splice(0)) if (record.level >= 50) problems.push(`the daemon logged ${record.msg}: ${JSON.stringify(record)}`);
  count(setup.kinds, built.mutated ? "mutated" : "as generated");
  for (const stream of built.mutated ? [] : built.streams) {
    count(setup.kinds, stream.fate);
    for (const note of stream.notes) count(setup.tweaks, note);
  }
  const forwarded = readings.flatMap((reading) => reading.requests).filter((request) => request.complete).length;
  if (forwarded > 0) count(setup.kinds, "forwarded a request whole");
  if (problems.length > 0) throw new Error(`${problems.map((problem) => `- ${problem}`).join("\n")}\n${describe(built, pieces, client, readings)}`);
}

t.test("the frame writer, the model and the strict reader, on known bytes", async (t) => {
  // RFC 7541 C.1: 10 and 1337 with a 5-bit prefix, 42 with an 8-bit one.
  t.same([...hpackInteger(10, 5)], [0x0a]);
  t.same([...hpackInteger(1337, 5)], [0x1f, 0x9a, 0x0a]);
  t.same([...hpackInteger(42, 8)], [0x2a]);
  t.same([...headerBlock([{ name: ":method", value: "GET", form: "indexed" }, { name: "custom-key", value: "custom-header" }])], [0x82, 0x00, 0x0a, ...Buffer.from("custom-key"), 0x0d, ...Buffer.from("custom-header")]);
  t.same([...frame(FRAME.HEADERS, FLAG.END_HEADERS, 1, Buffer.from([0x82]))], [0, 0, 1, 1, 4, 0, 0, 0, 1, 0x82]);
  const sample = fc.sample(streamParts, { seed: 1, numRuns: 1 })[0]!;
  const plain = buildStream({ ...sample, tweaks: [], contentLength: "none", trailers: "none", ending: "ends", body: null, path: "/a", method: "GET" }, "m");
  t.equal(plain.fate, "plain", plain.why);
  t.equal(buildStream({ ...sample, tweaks: [{ kind: "uppercase-name", pick: 0 }] }, "m").fate, "never");
  t.equal(buildStream({ ...sample, tweaks: [], ending: "open" }, "m").fate, "cut");
  const good = readStrictRequests(Buffer.from("POST /a HTTP/1.1\r\nhost: a\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\nGET /b HTTP/1.1\r\nhost: a\r\ncontent-length: 2\r\n\r\nx", "latin1"));
  t.same(good.error, undefined);
  t.same(good.requests.map((request) => [request.target, request.body.toString(), request.complete]), [["/a", "abc", true], ["/b", "x", false]]);
  for (const bad of ["GET /a b HTTP/1.1\r\nhost: a\r\n\r\n", "GET /a HTTP/1.1\r\nhost: a\r\nx: y\rz\r\n\r\n", "GET /a HTTP/1.1\r\n\r\n", "GET /a HTTP/1.1\r\nhost: a\r\ncontent-length: 1\r\ntransfer-encoding: chunked\r\n\r\n", "GET /a HTTP/1.1\r\nhost: a\r\n folded\r\n\r\n"]) {
    t.not(readStrictRequests(Buffer.from(bad, "latin1")).error, undefined, `refused: ${JSON.stringify(bad)}`);
  }
  t.equal(settingsFrame([[3, 100]]).length, 15);
  t.equal(PREFACE.length, 24);
});

t.test(`fuzz: ${runs} h2 client connections, in random pieces, reach an HTTP/1.1 app only as well-formed requests they sent`, async (t) => {
  const upstream = await startRecordingUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url, "--upstream-protocol", "http1"]);
  const setup: FuzzSetup = { daemon, upstream, uncaught: [], kinds: new Map(), tweaks: new Map(), overflowCuts: 0, connectionErrors: 0, cases: 0 };
  await collect(setup);
  t.comment(`seed ${seed}${path === undefined ? "" : `, path ${path}`}: H2_FUZZ_SEED=${seed} replays this run`);
  const started = performance.now();
  // The daemon runs in this process: an uncaught exception during a case is that case's finding.
  await takingUncaught(setup.uncaught, () =>
    fc.assert(
      fc.asyncProperty(connectionPlan, cuts, (plan, cutAt) => runCase(setup, plan, cutAt)),
      { numRuns: runs, seed, ...(path === undefined ? {} : { path, endOnFailure: true }) },
    ),
  );
  t.pass(`${runs} connections, every request the app got well-formed and sent`);
  t.comment(`${setup.cases} cases in ${((performance.now() - started) / 1000).toFixed(1)} s: ${[...setup.kinds].map(([kind, n]) => `${n} ${kind}`).join(", ")}`);
  t.comment(`${setup.connectionErrors} connections ended by a connection error, each closed by the proxy`);
  t.comment(`hostile changes: ${[...setup.tweaks].sort().map(([kind, n]) => `${n} ${kind}`).join(", ")}`);
  // A session or upstream connection the proxy forgot would stay: a handful are the pool's.
  const sockets = process.getActiveResourcesInfo().filter((name) => name === "TCPSocketWrap").length;
  t.ok(sockets <= 20, `${sockets} sockets open in this process after the fuzz`);
  // RFC 9113 §8.1.1: a stream error only (node:http2 on node 24 ended the whole connection before the codec).
  t.equal(setup.overflowCuts, 0, `DATA past a content-length ends its stream, not the connection (${setup.overflowCuts} cases)`);
  // Not crashed, and still serving both protocols.
  const http1 = await exchange(daemon.port, { pieces: [Buffer.from("GET /health HTTP/1.1\r\nHost: a\r\n\r\n")], responses: 1, then: "half-close", timeoutMs: CASE_BOUND_MS });
  t.equal(http1.finals[0], 200, "/health over HTTP/1.1 after the fuzz");
  const client = await RawH2Client.connect(daemon.port);
  await client.write(Buffer.concat([PREFACE, settingsFrame([]), frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, 1, headerBlock([{ name: ":method", value: "GET", form: "indexed" }, { name: ":scheme", value: "http", form: "indexed" }, { name: ":path", value: "/health" }, { name: ":authority", value: "a" }]))]));
  t.ok(await client.until((view) => view.streams.get(1)?.ended === true, CASE_BOUND_MS), "/health over h2 answered");
  t.equal(client.streams.get(1)?.status, 200, "/health over h2 after the fuzz");
  client.destroy();
});
