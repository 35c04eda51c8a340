// The codec against nghttp2 (node:http2) at session level: the same client bytes to both servers; what nghttp2 keeps from the app the codec keeps from it too, and the other differences are counted by class.
// H2_DIFF_RUNS (default 400 cases) and H2_DIFF_SEED replay or widen it, H2_DIFF_SURVEY=1 counts failures instead of stopping; `make fuzz` (FUZZ_RUNS) runs FUZZ_RUNS / 100 cases with a random seed. H2_DIFF_PATH replays one shrunk case.
import fc from "fast-check";
import t from "tap";
import { runCase, type Answer } from "./session-client.js";
import { diffCase, SessionVerdicts, type CaseOutcome } from "./session-compare.js";
import { mutateFrames, mutateScript, mutations, type Mutation } from "./session-mutations.js";
import { piecesOf, renderScript, script, serialize, type Script } from "./session-script.js";
import { startCodecServer, startNodeServer } from "./session-servers.js";
import { fuzzSettings } from "../helpers/fuzz-settings.js";

const { runs, seed, path } = fuzzSettings("H2_DIFF", { fixedSeed: 20261206, defaultRuns: 400, fuzzShare: 100, newSeedWhenRunsSet: true });
/** H2_DIFF_SURVEY=1: failures are counted by class like the other differences instead of stopping the run (to see them all at once). */
const survey = process.env.H2_DIFF_SURVEY === "1";
/** How long one connection may stay open and silent when the marker PING cannot come back (a length mutation swallowed it). */
const CASE_BOUND_MS = 400;
/** The whole property's bound: a run that has not finished by then fails rather than hangs (a case takes a few ms). */
const TOTAL_BOUND_MS = Math.max(60_000, runs * 100);

function describe(s: Script, list: readonly Mutation[]): string {
  return `mutations ${JSON.stringify(list)}; requests ${JSON.stringify(s.requests.map((r) => r.fields))}`;
}

t.test("the codec refuses at least what nghttp2 refuses, session by session", async (t) => {
  t.comment(`seed ${seed}, ${runs} cases (replay: H2_DIFF_SEED=${seed} H2_DIFF_RUNS=${runs}); node ${process.version}, nghttp2 ${process.versions.nghttp2}`);
  const [codec, node] = await Promise.all([startCodecServer(), startNodeServer()]);
  t.teardown(async () => {
    await Promise.all([codec.close(), node.close()]);
  });
  const verdicts = new SessionVerdicts();
  const started = performance.now();
  const property = fc.asyncProperty(script, mutations, fc.array(fc.nat(), { maxLength: 6 }), async (s, list, cuts) => {
    const mutated = mutateScript(s, list);
    const frames = renderScript(mutated);
    mutateFrames(frames, list);
    const pieces = piecesOf(serialize(frames), cuts);
    const [codecAnswer, nodeAnswer]: Answer[] = await Promise.all([runCase(codec.port, pieces, CASE_BOUND_MS), runCase(node.port, pieces, CASE_BOUND_MS)]);
    const outcome = (answer: Answer, server: typeof codec): CaseOutcome => ({ answer, app: server.take(answer.clientPort) });
    const problems = diffCase(list, frames, outcome(codecAnswer!, codec), outcome(nodeAnswer!, node), verdicts);
    if (survey) {
      for (const problem of problems) verdicts.count(`FAILURE ${list.map((m) => m.kind).join(" + ") || "valid"}: ${problem.replace(/stream \d+: /, "").slice(0, 400)}\n      bytes ${serialize(frames).toString("hex")}`);
    } else if (problems.length > 0) {
      const seen = (answer: Answer) => JSON.stringify({ resets: [...answer.resets], goaway: answer.goaway, end: answer.end });
      throw new Error(`${problems.join("; ")}\n  ${describe(mutated, list)}\n  codec answered ${seen(codecAnswer!)}, nghttp2 ${seen(nodeAnswer!)}\n  bytes ${serialize(frames).toString("hex")}`);
    }
  });
  try {
    await fc.assert(property, { numRuns: runs, seed, interruptAfterTimeLimit: TOTAL_BOUND_MS, markInterruptAsFailure: true, ...(path !== undefined ? { path } : {}) });
  } finally {
    t.comment(`${runs} cases in ${Math.round(performance.now() - started)} ms`);
    for (const line of verdicts.report()) t.comment(line);
  }
  t.ok(verdicts.agreedValid > 0, "some valid sessions were taken alike by both");
  t.ok(verdicts.refusedByBoth > 0, "some requests were refused by both");
});
