// Issue 24.1: pipelined answers the proxy makes itself never recurse into the next request (one 51 KB write once overflowed the stack and ended the process).
import { connect } from "node:net";
import t from "tap";
import { startTestDaemon } from "../helpers/in-process-daemon.js";
import { startUpstream } from "../helpers/upstream.js";
import { ResponseReader } from "./raw-exchange.js";

/** Enough to overflow any stack one frame per request deep: 1,073 health answers did, and 10,000 overflowed it on the code before af471e3 (100,000 took 26 s of the unit tier). */
const COUNT = 10_000;

interface Outcome {
  readonly finals: readonly number[];
  readonly bodies: readonly Buffer[];
  readonly malformed: boolean;
}

/** Writes `request` COUNT times (then `last`, if given) in one write; reads answers until `expected` have come or the connection closes. */
function pipeline(port: number, request: string, expected: number, last = ""): Promise<Outcome> {
  const reader = new ResponseReader(() => request.startsWith("HEAD"));
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(request.repeat(COUNT) + last));
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`${reader.finals.length} of ${expected} answers in 60 s`));
    }, 60_000);
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ finals: reader.finals, bodies: reader.bodies, malformed: reader.malformed });
    };
    socket.on("data", (chunk: Buffer) => {
      reader.push(chunk);
      if (reader.finals.length >= expected || reader.malformed) done();
    });
    socket.on("error", () => {});
    socket.on("close", done);
  });
}

/** Every answer of `outcome` is `status` with `body`. */
function countMatching(outcome: Outcome, status: number, body: string | undefined): number {
  let matching = 0;
  for (let index = 0; index < outcome.finals.length; index++) {
    if (outcome.finals[index] === status && (body === undefined || outcome.bodies[index]!.toString("latin1") === body)) matching++;
  }
  return matching;
}

const KEEPING: readonly { readonly name: string; readonly request: string; readonly status: number; readonly body?: string }[] = [
  { name: "liveness", request: "GET /health HTTP/1.1\r\nHost: a\r\n\r\n", status: 200, body: '{"status":"ok"}' },
  { name: "liveness, HEAD", request: "HEAD /healthz HTTP/1.1\r\nHost: a\r\n\r\n", status: 200, body: "" },
  { name: "readiness", request: "GET /readyz HTTP/1.1\r\nHost: a\r\n\r\n", status: 200, body: '{"status":"ready"}' },
  { name: "readiness, verbose", request: "GET /readyz?verbose HTTP/1.1\r\nHost: a\r\n\r\n", status: 200 },
  { name: "one check", request: "GET /readyz/shutdown HTTP/1.1\r\nHost: a\r\n\r\n", status: 200, body: "ok" },
  { name: "OPTIONS *", request: "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", status: 200, body: "" },
  { name: "an unmet expectation (417)", request: "GET /x HTTP/1.1\r\nHost: a\r\nExpect: foo\r\n\r\n", status: 417, body: "" },
];

t.test(`${COUNT} pipelined local answers in one write, each kind: every one answered, in order, the process still serving`, async (t) => {
  const upstream = await startUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  for (const kind of KEEPING) {
    const outcome = await pipeline(daemon.port, kind.request, COUNT);
    t.notOk(outcome.malformed, `${kind.name}: the answers parse`);
    t.equal(countMatching(outcome, kind.status, kind.body), COUNT, `${kind.name}: ${COUNT} answers of ${kind.status}`);
  }
  t.equal(upstream.received.length, 0, "none reached the app");
});

const CLOSING: readonly { readonly name: string; readonly last: string; readonly status: number }[] = [
  { name: "a missing Host (400)", last: "GET /x HTTP/1.1\r\n\r\n", status: 400 },
  { name: "an HTTP/2.0 request line (505)", last: "GET /x HTTP/2.0\r\nHost: a\r\n\r\n", status: 505 },
  { name: "a parse error (400)", last: "GET /x HTTP/1.1\r\nHost: a\r\nBad Header\r\n\r\n", status: 400 },
];

t.test(`${COUNT} pipelined health answers, then a refusal that closes: all answered in order, the refusal last`, async (t) => {
  const upstream = await startUpstream(t);
  const daemon = await startTestDaemon(t, ["--upstream", upstream.url]);
  for (const kind of CLOSING) {
    const outcome = await pipeline(daemon.port, "GET /health HTTP/1.1\r\nHost: a\r\n\r\n", COUNT + 1, kind.last);
    t.equal(outcome.finals.length, COUNT + 1, `${kind.name}: every answer came`);
    t.equal(countMatching(outcome, 200, '{"status":"ok"}'), COUNT, `${kind.name}: the health answers first`);
    t.equal(outcome.finals[COUNT], kind.status, `${kind.name}: then the refusal`);
  }
  t.equal(upstream.received.length, 0, "none reached the app");
});
