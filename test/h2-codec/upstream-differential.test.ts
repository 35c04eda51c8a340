// The codec's client side against nghttp2 (node:http2's client) at session level: the same hostile app bytes to both; what nghttp2 keeps from its user the codec keeps from its own too, nothing malformed reaches it, and the other differences are counted by class.
// H2_UP_DIFF_RUNS (default 300 cases) and H2_UP_DIFF_SEED replay or widen it, H2_UP_DIFF_SURVEY=1 counts failures instead of stopping; `make fuzz` (FUZZ_RUNS) runs FUZZ_RUNS / 100 cases with a random seed. H2_UP_DIFF_PATH replays one shrunk case.
import fc from "fast-check";
import t from "tap";
import { SessionVerdicts } from "./session-compare.js";
import { mutateFrames, mutateScript, type Mutation } from "./session-mutations.js";
import { piecesOf, renderScript, serialize } from "./session-script.js";
import { ScriptedApp } from "./upstream-app.js";
import { runClient, startCodecClient, startNodeClient } from "./upstream-clients.js";
import { diffUpstreamCase, type ClientOutcome } from "./upstream-compare.js";
import { UPSTREAM_FIELD_MUTATIONS, UPSTREAM_FRAME_MUTATIONS, upstreamMutations } from "./upstream-mutations.js";
import { upstreamCase, type Method } from "./upstream-script.js";
import { fuzzSettings } from "../helpers/fuzz-settings.js";

const { runs, seed, path } = fuzzSettings("H2_UP_DIFF", { fixedSeed: 20261207, defaultRuns: 300, fuzzShare: 100, newSeedWhenRunsSet: true });
/** H2_UP_DIFF_SURVEY=1: failures are counted by class like the other differences instead of stopping the run (to see them all at once). */
const survey = process.env.H2_UP_DIFF_SURVEY === "1";
/** How long one connection may stay open and silent when the marker PING cannot come back (a length mutation swallowed it), and how long a client's user may take to hear the close. */
const CASE_BOUND_MS = 400;
/** The whole property's bound: a run that has not finished by then fails rather than hangs (a case takes a few ms). */
const TOTAL_BOUND_MS = Math.max(60_000, runs * 100);
const EMPTY = Buffer.alloc(0);

function describe(methods: readonly Method[], list: readonly Mutation[]): string {
  return `mutations ${JSON.stringify(list)}; requests ${JSON.stringify(methods)}`;
}

t.test("the codec's client side refuses at least what nghttp2's refuses, session by session", async (t) => {
  t.comment(`seed ${seed}, ${runs} cases (replay: H2_UP_DIFF_SEED=${seed} H2_UP_DIFF_RUNS=${runs}); node ${process.version}, nghttp2 ${process.versions.nghttp2}`);
  const app = await ScriptedApp.start();
  t.teardown(() => app.close());
  const verdicts = new SessionVerdicts("user");
  const started = performance.now();
  const property = fc.asyncProperty(upstreamCase, upstreamMutations, fc.array(fc.nat(), { maxLength: 6 }), async ({ methods, script }, list, cuts) => {
    const frames = renderScript(mutateScript(script, list, UPSTREAM_FIELD_MUTATIONS), true);
    mutateFrames(frames, list, UPSTREAM_FRAME_MUTATIONS);
    const bytes = serialize(frames, EMPTY);
    const pieces = piecesOf(bytes, cuts);
    // One client after the other: the app serves one connection at a time.
    const codec = await runClient(app, pieces, methods, startCodecClient, CASE_BOUND_MS);
    const node = await runClient(app, pieces, methods, startNodeClient, CASE_BOUND_MS);
    const problems = diffUpstreamCase(list, frames, methods, codec, node, verdicts);
    const seen = (c: ClientOutcome) => JSON.stringify({ resets: [...c.wire.resets], goaway: c.wire.goaway, end: c.wire.end, closed: c.user.closed });
    if (survey) {
      for (const problem of problems) verdicts.count(`FAILURE ${list.map((m) => m.kind).join(" + ") || "valid"}: ${problem.replace(/stream \d+: /, "").slice(0, 400)}\n      ${describe(methods, list)}\n      codec answered ${seen(codec)}, nghttp2 ${seen(node)}\n      bytes ${bytes.toString("hex")}`);
    } else if (problems.length > 0) {
      throw new Error(`${problems.join("; ")}\n  ${describe(methods, list)}\n  codec answered ${seen(codec)}, nghttp2 ${seen(node)}\n  bytes ${bytes.toString("hex")}`);
    }
  });
  try {
    await fc.assert(property, { numRuns: runs, seed, interruptAfterTimeLimit: TOTAL_BOUND_MS, markInterruptAsFailure: true, ...(path !== undefined ? { path } : {}) });
  } finally {
    t.comment(`${runs} cases in ${Math.round(performance.now() - started)} ms`);
    for (const line of verdicts.report()) t.comment(line);
  }
  t.ok(verdicts.agreedValid > 0, "some valid sessions reached both users alike");
  t.ok(verdicts.refusedByBoth > 0, "some responses were refused by both");
});
