// The --metrics-merge reader against parse-prometheus-text-format on generated expositions (fast-check), in any chunking, and its refusals of malformed text.
import fc from "fast-check";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import t from "tap";
import { ExpositionReader, readExposition } from "../../src/metrics/exposition-reader.js";
import { fuzzSettings } from "../helpers/fuzz-settings.js";

const settings = fuzzSettings("EXPOSITION_READER", { fixedSeed: 5501, defaultRuns: 300 });

const nameArb = fc.stringMatching(/^[a-z][a-z0-9_]{0,10}$/).filter((name) => !/_(total|bucket|sum|count|created)$/.test(name));
const labelValueArb = fc.array(fc.constantFrom("a", "b", " ", "\\\\", '\\"', "\\n", "é", ",", "}", "="), { maxLength: 6 }).map((parts) => parts.join(""));
const valueArb = fc.oneof(fc.integer({ min: -1000, max: 1000 }).map(String), fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e9, max: 1e9 }).map(String), fc.constantFrom("NaN", "+Inf", "-Inf", "1e3", "0.5"));
const typeArb = fc.constantFrom("counter", "gauge", "histogram", "summary", "untyped", undefined);

interface Generated {
  readonly name: string;
  readonly type: string | undefined;
  readonly help: string | undefined;
  readonly lines: readonly string[];
}

/** One family as an app could write it: HELP and TYPE (either, both, neither), then samples of its type. */
const familyArb = (name: string) =>
  fc
    .record({
      type: typeArb,
      help: fc.option(fc.constantFrom("Requests.", "A \\\\ path.", "Two\\nlines.", "é ünïcode"), { nil: undefined }),
      labelSets: fc.uniqueArray(fc.record({ path: labelValueArb }), { minLength: 1, maxLength: 3, selector: (labels) => labels.path }),
      values: fc.array(valueArb, { minLength: 6, maxLength: 6 }),
      timestamp: fc.option(fc.integer({ min: 0, max: 2 ** 40 }), { nil: undefined }),
    })
    .map(({ type, help, labelSets, values, timestamp }): Generated => {
      const ts = timestamp === undefined ? "" : ` ${timestamp}`;
      const lines: string[] = [];
      if (help !== undefined) lines.push(`# HELP ${name} ${help}`);
      if (type !== undefined) lines.push(`# TYPE ${name} ${type}`);
      for (const [index, { path }] of labelSets.entries()) {
        const labels = `path="${path}"`;
        if (type === "histogram") {
          lines.push(`${name}_bucket{${labels},le="0.1"} ${index}`, `${name}_bucket{${labels},le="+Inf"} ${index + 1}`, `${name}_sum{${labels}} ${values[0]}`, `${name}_count{${labels}} ${index + 1}`);
        } else if (type === "summary") {
          lines.push(`${name}{${labels},quantile="0.5"} ${values[1]}`, `${name}_sum{${labels}} ${values[2]}`, `${name}_count{${labels}} 3`);
        } else {
          lines.push(`${name}{${labels}} ${values[3]}${ts}`);
        }
      }
      return { name, type, help, lines };
    });

const expositionArb = fc.uniqueArray(nameArb, { minLength: 1, maxLength: 5 }).chain((names) => fc.tuple(...names.map(familyArb)));

t.test("the same families, types and lines as parse-prometheus-text-format reads", async (t) => {
  fc.assert(
    fc.property(expositionArb, (families) => {
      const text = families.flatMap((family) => family.lines).join("\n") + "\n";
      const ours = readExposition(text);
      if (!ours.ok) throw new Error(`refused: ${ours.error}\n${text}`);
      const theirs = parsePrometheusTextFormat(text);
      t.same(
        ours.families.map((family) => family.name),
        theirs.map((family) => family.name),
      );
      t.same(
        ours.families.map((family) => family.type.toUpperCase()),
        theirs.map((family) => family.type),
      );
      t.same(
        ours.families.map((family) => family.lines),
        families.map((family) => family.lines),
        "each family's lines as written",
      );
    }),
    settings.options,
  );
});

t.test("any chunking reads the same as the whole text, and no input throws", async (t) => {
  fc.assert(
    fc.property(expositionArb, fc.array(fc.nat(), { maxLength: 8 }), fc.string({ maxLength: 40 }), (families, cuts, noise) => {
      const text = families.flatMap((family) => family.lines).join("\n") + "\n" + noise;
      const reader = new ExpositionReader();
      let at = 0;
      for (const cut of [...cuts.map((value) => value % (text.length + 1))].sort((a, b) => a - b)) {
        reader.push(text.slice(at, cut));
        at = cut;
      }
      reader.push(text.slice(at));
      t.same(reader.end(), readExposition(text));
    }),
    settings.options,
  );
});

t.test("malformed text is refused with the line", async (t) => {
  const cases: Array<[string, string, RegExp]> = [
    ["a value that is not a number", "foo 1x\n", /line 1: bad value/],
    ["no value", "foo\n", /line 1: not a sample line/],
    ["an unclosed label set", 'foo{a="1" 1\n', /not a sample line/],
    ["a label without quotes", "foo{a=1} 1\n", /bad label set/],
    ["a label twice", 'foo{a="1",a="2"} 1\n', /bad label set/],
    ["a bad escape in a label value", 'foo{a="\\x"} 1\n', /not a sample line/],
    ["a bad metric name", "# TYPE 1foo counter\n", /bad metric name/],
    ["an unknown type", "# TYPE foo meter\n", /bad TYPE "meter"/],
    ["a second TYPE", "# TYPE foo gauge\n# TYPE foo gauge\n", /second TYPE for foo/],
    ["a second HELP", "# HELP foo a\n# HELP foo b\n", /second HELP for foo/],
    ["TYPE after samples", "foo 1\n# TYPE foo gauge\n", /TYPE for foo after its samples/],
    ["a family split in two", "# TYPE foo gauge\nfoo 1\nbar 2\nfoo 3\n", /line 4: foo again after other families/],
    ["a bad timestamp", "foo 1 1.5\n", /not a sample line/],
    ["HTML", "<html><body>not metrics</body></html>\n", /not a sample line/],
  ];
  for (const [what, text, error] of cases) {
    const result = readExposition(text);
    t.equal(result.ok, false, what);
    if (!result.ok) t.match(result.error, error, what);
  }
});

t.test("suffixes belong to their family by its type; other comments and blank lines are dropped", async (t) => {
  const text = "# A comment\n# HELP h_seconds Latency.\n# TYPE h_seconds histogram\nh_seconds_bucket{le=\"+Inf\"} 1\n\nh_seconds_sum 0.5\nh_seconds_count 1\n# TYPE g gauge\ng 1\ng_count 2\n# TYPE c counter\nc_total 1\n";
  const result = readExposition(text);
  t.ok(result.ok);
  if (!result.ok) return;
  t.same(
    result.families.map((family) => [family.name, family.lines.length]),
    [
      ["h_seconds", 5],
      ["g", 2],
      ["g_count", 1],
      ["c", 2],
    ],
    "a gauge has no _count: g_count is a family of its own",
  );
  t.ok(result.families[3]!.claimedNames.has("c_total"));
});
