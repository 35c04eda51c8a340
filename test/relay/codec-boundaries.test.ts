// The relay's layout as its imports show it: HTTP/1.1 and HTTP/2 side by side over the shared core, neither importing the other; only the routing, the one exchange (which makes the app side its pool speaks) and the listener pair them.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import t from "tap";

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), "../../src");
const RELAY = join(SRC, "relay");

/** Every `from "…"` of a file, resolved to a path relative to src/. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const targets: string[] = [];
  for (const match of text.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+"(\.{1,2}\/[^"]+)"/gms)) {
    targets.push(relative(SRC, resolve(dirname(file), match[1]!)));
  }
  return targets;
}

function sourcesIn(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
    .map((entry) => join(directory, entry.name));
}

/** `file imports target`, for each import of the files in `directory` that lands under one of `forbidden`. */
function crossings(directory: string, forbidden: readonly string[]): string[] {
  const found: string[] = [];
  for (const file of sourcesIn(directory)) {
    for (const target of importsOf(file)) {
      if (forbidden.some((prefix) => target.startsWith(prefix))) found.push(`${relative(SRC, file)} imports ${target}`);
    }
  }
  return found;
}

t.test("the HTTP/1.1 codec imports nothing of HTTP/2's", async (t) => {
  t.strictSame(crossings(join(RELAY, "http1"), ["relay/http2/", "h2-codec/"]), []);
});

t.test("the HTTP/2 side imports nothing of HTTP/1.1's", async (t) => {
  t.strictSame(crossings(join(RELAY, "http2"), ["relay/http1/"]), []);
  t.strictSame(crossings(join(SRC, "h2-codec"), ["relay/"]), [], "the codec itself knows nothing of the relay");
});

t.test("the shared core imports neither codec; only the routing, the listener and the exchange's choice of app side pair them", async (t) => {
  const core = crossings(RELAY, ["relay/http1/", "relay/http2/", "h2-codec/"]);
  t.strictSame(
    core.filter((line) => !line.startsWith("relay/relay-server.ts ") && !line.startsWith("relay/routing.ts ") && !/^relay\/exchange\.ts imports relay\/(http1\/(http1-app-side|upstream-pool|llhttp-binding)|http2\/(h2c-app-side|h2c-pool))\.js$/.test(line)),
    [],
  );
  t.ok(core.length > 0, "the listener is seen importing both (the scan reads imports at all)");
});
