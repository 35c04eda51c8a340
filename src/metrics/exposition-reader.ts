// A strict line-level reader of the Prometheus text format 0.0.4 for --metrics-merge (CONTRACT §17): groups an app's lines into families, kept as text, and refuses malformed input.
//
// Why not a library: the app's families are passed through as the app wrote them (we never
// re-render its samples), so all we need is where each family's lines start and end, and a
// refusal for text Prometheus would refuse. The only exposition parser in reach
// (parse-prometheus-text-format) is unmaintained, lenient, and builds objects we would throw
// away; the tests check this reader against it on generated expositions.
//
// Incremental (`push` per network chunk, then `end`): an 8 MiB exposition is read a chunk per
// event-loop turn, never in one long synchronous pass that would hold the proxy.

/** One family: its name, the names its samples and its type claim, and its lines as written. */
export interface ExpositionFamily {
  readonly name: string;
  readonly type: MetricType;
  /** The family name and every sample name it may have (`_bucket`, `_sum`, `_count`, `_created`, `_total`). */
  readonly claimedNames: ReadonlySet<string>;
  readonly lines: readonly string[];
}

export type MetricType = "counter" | "gauge" | "histogram" | "summary" | "untyped";

export type ExpositionResult = { readonly ok: true; readonly families: readonly ExpositionFamily[] } | { readonly ok: false; readonly error: string };

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const TYPES: ReadonlySet<string> = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);
/** Sample names a family of each type may write besides its own name. */
const SUFFIXES: Record<MetricType, readonly string[]> = {
  counter: ["_total", "_created"],
  gauge: [],
  histogram: ["_bucket", "_sum", "_count", "_created"],
  summary: ["_sum", "_count", "_created"],
  untyped: [],
};
/** `name`, optional `{labels}`, a value, an optional integer timestamp. */
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[^"}\\]|"(?:[^"\\\n]|\\[\\"n])*")*\})?[ \t]+(\S+)(?:[ \t]+(-?[0-9]+))?[ \t]*$/;
const FLOAT = /^[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|Inf|inf|NaN|nan)$/;

/** Every name a family of `type` called `name` may write. */
export function claimedNames(name: string, type: MetricType): Set<string> {
  return new Set([name, ...SUFFIXES[type].map((suffix) => name + suffix)]);
}

interface OpenFamily {
  name: string;
  type: MetricType;
  typed: boolean;
  helped: boolean;
  sampled: boolean;
  lines: string[];
}

/** Reads one exposition in pieces: `push` each piece of text, then `end` for the families or the first fault. */
export class ExpositionReader {
  private pending = "";
  private lineNumber = 0;
  private error: string | undefined;
  private readonly families: ExpositionFamily[] = [];
  private readonly seen = new Set<string>();
  private current: OpenFamily | undefined;

  push(text: string): void {
    if (this.error !== undefined) return;
    // Only the new piece is searched: a long line arriving in many pieces is not rescanned each time.
    const last = text.lastIndexOf("\n");
    if (last < 0) {
      this.pending += text;
      return;
    }
    const complete = this.pending + text.slice(0, last);
    this.pending = text.slice(last + 1);
    for (const line of complete.split("\n")) {
      this.readLine(line);
      if (this.error !== undefined) return;
    }
  }

  end(): ExpositionResult {
    if (this.error === undefined && this.pending !== "") this.readLine(this.pending);
    this.pending = "";
    if (this.error === undefined) this.close();
    return this.error === undefined ? { ok: true, families: this.families } : { ok: false, error: this.error };
  }

  private fail(why: string): void {
    this.error = `line ${this.lineNumber}: ${why}`;
  }

  private readLine(raw: string): void {
    this.lineNumber++;
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line.trim() === "") return;
    if (line.startsWith("#")) return this.readComment(line);
    const sample = SAMPLE.exec(line);
    if (!sample) return this.fail("not a sample line");
    const [, name, labels, value, timestamp] = sample as unknown as [string, string, string | undefined, string, string | undefined];
    if (!FLOAT.test(value)) return this.fail(`bad value ${JSON.stringify(value)}`);
    if (timestamp !== undefined && !Number.isSafeInteger(Number(timestamp))) return this.fail("bad timestamp");
    if (labels !== undefined && !labelsWellFormed(labels)) return this.fail("bad label set");
    const family = this.current !== undefined && claimedNames(this.current.name, this.current.type).has(name) ? this.current : this.open(name);
    if (family === undefined) return;
    family.sampled = true;
    family.lines.push(line);
  }

  private readComment(line: string): void {
    const match = /^#[ \t]+(HELP|TYPE)[ \t]+(\S+)(?:[ \t]+(.*))?$/.exec(line);
    // Any other comment means nothing to Prometheus: dropped, as it would be.
    if (!match) return;
    const [, keyword, name, rest = ""] = match as unknown as [string, "HELP" | "TYPE", string, string | undefined];
    if (!METRIC_NAME.test(name)) return this.fail(`bad metric name ${JSON.stringify(name)}`);
    const family = this.current?.name === name ? this.current : this.open(name);
    if (family === undefined) return;
    if (keyword === "HELP") {
      if (family.helped) return this.fail(`second HELP for ${name}`);
      if (!/^(?:[^\\]|\\[\\n])*$/.test(rest)) return this.fail(`bad escape in the HELP of ${name}`);
      family.helped = true;
    } else {
      const type = rest.trim();
      if (!TYPES.has(type)) return this.fail(`bad TYPE ${JSON.stringify(type)} for ${name}`);
      if (family.typed) return this.fail(`second TYPE for ${name}`);
      if (family.sampled) return this.fail(`TYPE for ${name} after its samples`);
      family.typed = true;
      family.type = type as MetricType;
    }
    family.lines.push(line);
  }

  /** Closes the family being read and opens `name`'s; a name seen before is a fault (a family's lines are contiguous). */
  private open(name: string): OpenFamily | undefined {
    this.close();
    if (this.seen.has(name)) {
      this.fail(`${name} again after other families`);
      return undefined;
    }
    this.seen.add(name);
    this.current = { name, type: "untyped", typed: false, helped: false, sampled: false, lines: [] };
    return this.current;
  }

  private close(): void {
    const family = this.current;
    if (family === undefined) return;
    this.current = undefined;
    this.families.push({ name: family.name, type: family.type, claimedNames: claimedNames(family.name, family.type), lines: family.lines });
  }
}

/** `{a="1",b="2"}`, a trailing comma allowed, each label name once. */
function labelsWellFormed(braced: string): boolean {
  const inner = braced.slice(1, -1);
  const names = new Set<string>();
  const label = /[ \t]*([a-zA-Z_][a-zA-Z0-9_]*)[ \t]*=[ \t]*"(?:[^"\\\n]|\\[\\"n])*"[ \t]*/y;
  let at = 0;
  while (inner.slice(at).trim() !== "") {
    label.lastIndex = at;
    const match = label.exec(inner);
    if (!match || names.has(match[1]!)) return false;
    names.add(match[1]!);
    at = label.lastIndex;
    if (at === inner.length) return true;
    if (inner[at] !== ",") return false;
    at++;
  }
  return true;
}

/** The whole text at once (tests, small inputs). */
export function readExposition(text: string): ExpositionResult {
  const reader = new ExpositionReader();
  reader.push(text);
  return reader.end();
}
